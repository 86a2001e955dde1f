"""The TLS flags of `apiforge serve` (kube-apiserver's names and value names, k8s.io/component-base
cli/flag/ciphersuites_flag.go): parsed into TLSOptions, kube's suite names mapped to OpenSSL's, and their
usage errors (exit 2) in kube's words; plain HTTP refused off loopback."""

from __future__ import annotations

import ssl

import pytest
from click.testing import CliRunner

from apiforge.cli import main
from apiserver.server.options import ServeOptions
from apiserver.server.tlsoptions import TLSOptions


def serve(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["serve", *arguments])
    return result.exit_code, result.output


def test_tls_is_the_default(served: list[ServeOptions]) -> None:
    assert serve() == (0, "")
    assert served[0].tls == TLSOptions()
    assert not served[0].tls.insecure_serving
    assert served[0].tls.minimum_version == ssl.TLSVersion.TLSv1_2  # Go's default


def test_the_flags(served: list[ServeOptions]) -> None:
    code, output = serve(
        "--tls-cert-file=s.crt",
        "--tls-private-key-file=s.key",
        "--client-ca-file=clients.crt",
        "--tls-min-version=VersionTLS12",
        "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256",
        "--tls-san=api.example.com,10.0.0.1",
        "--tls-san",
        "other.example.com",
    )
    assert code == 0, output
    tls = served[0].tls
    assert (tls.cert_file, tls.private_key_file, tls.client_ca_file) == (
        "s.crt",
        "s.key",
        "clients.crt",
    )
    assert tls.sans == ("api.example.com", "10.0.0.1", "other.example.com")
    # TLS 1.3's suites are accepted and not configurable, as in Go
    assert tls.openssl_ciphers == "ECDHE-ECDSA-AES128-GCM-SHA256"


def test_insecure_serving_on_loopback(served: list[ServeOptions]) -> None:
    assert serve("--insecure-serving")[0] == 0
    assert serve("--insecure-serving", "--bind-address=::1")[0] == 0
    assert [options.tls.insecure_serving for options in served] == [True, True]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--insecure-serving", "--bind-address=0.0.0.0"], "0.0.0.0 is not one"),
        (["--insecure-serving", "--bind-address=10.1.2.3"], "only a loopback --bind-address"),
        (["--tls-min-version=VersionTLS14"], 'unknown tls version "VersionTLS14"'),
        (["--tls-cipher-suites=TLS_FOO"], "Cipher suite TLS_FOO not supported or doesn't exist"),
        (
            ["--tls-min-version=VersionTLS13", "--tls-cipher-suites=TLS_AES_128_GCM_SHA256"],
            "cipher suites may not be specified when --tls-min-version is 'VersionTLS13'",
        ),
        (["--tls-cert-file=s.crt"], "--tls-cert-file and --tls-private-key-file must be given"),
    ],
)
def test_usage_errors(served: list[ServeOptions], arguments: list[str], message: str) -> None:
    code, output = serve(*arguments)
    assert code == 2
    assert message in output
    assert served == []
