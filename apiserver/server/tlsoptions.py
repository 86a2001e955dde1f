"""The TLS options of `apiforge serve`, named and checked as kube-apiserver's secure serving options
(k8s.io/apiserver pkg/server/options/serving.go) and their value names (k8s.io/component-base cli/flag
ciphersuites_flag.go: Go's names for versions and cipher suites, mapped here to OpenSSL's), and their click
flags (``tls_flags``), kept apart from the other serve options (server/options.py)."""

from __future__ import annotations

import functools
import ipaddress
import ssl
from collections.abc import Callable
from dataclasses import dataclass

import click

TLS_VERSIONS = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}
TLS13_SUITES = frozenset(
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
)
"""Accepted and not configurable, as in Go (crypto/tls picks TLS 1.3 suites itself; so does OpenSSL here)."""
CIPHER_SUITES = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
}


@dataclass(frozen=True, slots=True)
class TLSOptions:
    """How `serve` serves: TLS with the bootstrapped PKI unless told otherwise."""

    cert_file: str = ""
    private_key_file: str = ""
    client_ca_file: str = ""
    min_version: str = ""
    """A kube version name; empty: Go's default minimum, TLS 1.2."""
    cipher_suites: tuple[str, ...] = ()
    sans: tuple[str, ...] = ()
    insecure_serving: bool = False

    @property
    def minimum_version(self) -> ssl.TLSVersion:
        return TLS_VERSIONS.get(self.min_version, ssl.TLSVersion.TLSv1_2)

    @property
    def openssl_ciphers(self) -> str:
        """The suites for TLS 1.2 and below as OpenSSL's cipher string ("" when none is named)."""
        names = [CIPHER_SUITES[s] for s in self.cipher_suites if s in CIPHER_SUITES]
        return ":".join(dict.fromkeys(names))

    def validate(self, bind_address: str) -> list[str]:
        """What is wrong, in kube's words where kube has the check."""
        problems = []
        if self.min_version and self.min_version not in TLS_VERSIONS:
            problems.append(f'unknown tls version "{self.min_version}"')
        for suite in self.cipher_suites:
            if suite not in CIPHER_SUITES and suite not in TLS13_SUITES:
                problems.append(f"Cipher suite {suite} not supported or doesn't exist")
        if self.min_version == "VersionTLS13" and self.cipher_suites:
            problems.append(
                "cipher suites may not be specified when --tls-min-version is 'VersionTLS13'"
            )
        if self.openssl_ciphers:
            try:
                ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).set_ciphers(self.openssl_ciphers)
            except ssl.SSLError:
                problems.append(
                    f"--tls-cipher-suites: this OpenSSL ({ssl.OPENSSL_VERSION}) offers none of them"
                )
        if bool(self.cert_file) != bool(self.private_key_file):
            problems.append("--tls-cert-file and --tls-private-key-file must be given together")
        if self.insecure_serving and not is_loopback(bind_address):
            problems.append(
                f"--insecure-serving serves plain HTTP, which only a loopback --bind-address may;"
                f" {bind_address} is not one"
            )
        return problems


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def tls_flags(parsed: Callable[..., None]) -> Callable[..., None]:
    """The TLS flags (kube-apiserver's names; --tls-san and --insecure-serving are k3s's and apiforge's),
    handed to ``parsed`` as one ``tls`` argument."""

    @click.option(
        "--tls-cert-file",
        default="",
        help="The serving certificate (PEM, may hold a chain);"
        " without it one is made in DATA_DIR/pki, signed by the CA made there.",
    )
    @click.option("--tls-private-key-file", default="", help="The key of --tls-cert-file.")
    @click.option(
        "--client-ca-file",
        default="",
        help="More CAs whose client certificates authenticate (CN: user, O: groups).",
    )
    @click.option(
        "--tls-min-version",
        default="",
        help="The lowest TLS version served: VersionTLS12 (the default) or VersionTLS13.",
    )
    @click.option(
        "--tls-cipher-suites",
        default="",
        help="Comma-separated cipher suites for TLS 1.2 (Go's names); default: OpenSSL's.",
    )
    @click.option(
        "--tls-san",
        multiple=True,
        help="Another DNS name or IP address for the generated serving certificate (repeatable).",
    )
    @click.option(
        "--insecure-serving",
        is_flag=True,
        help="Serve plain HTTP without authentication (only on a loopback address).",
    )
    @functools.wraps(parsed)
    def with_tls(
        *args: object,
        tls_cert_file: str,
        tls_private_key_file: str,
        client_ca_file: str,
        tls_min_version: str,
        tls_cipher_suites: str,
        tls_san: tuple[str, ...],
        insecure_serving: bool,
        **kwargs: object,
    ) -> None:
        tls = TLSOptions(
            tls_cert_file,
            tls_private_key_file,
            client_ca_file,
            tls_min_version,
            tuple(s.strip() for s in tls_cipher_suites.split(",") if s.strip()),
            tuple(n.strip() for san in tls_san for n in san.split(",") if n.strip()),
            insecure_serving,
        )
        problems = tls.validate(str(kwargs["bind_address"]))
        if problems:
            raise click.UsageError("; ".join(problems))
        parsed(*args, tls=tls, **kwargs)

    return with_tls
