"""The PKI bootstrap of `apiforge serve`: on first start, a CA, a serving certificate and an admin client
certificate in ``<data-dir>/pki`` (kubeadm's file names: ca.crt/ca.key, apiserver.crt/apiserver.key,
admin.crt/admin.key, front-proxy-ca.crt/.key and front-proxy-client.crt/.key), reused on restart and renewed on start when they come within ``RENEW_BEFORE`` of their
expiry, when they are no longer signed by the CA, or when the serving certificate no longer names every
address the server is reached at.

The admin is k3s's (``CN=system:admin, O=system:masters``): the masters group is what kube's RBAC binds to
cluster-admin. Keys are ECDSA P-256 (generated in a millisecond, unlike RSA), written 0600 whatever the umask.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from apiserver.authentication.user import MASTERS_GROUP
from apiserver.server.private import write_private

CA_VALIDITY = datetime.timedelta(days=3650)
LEAF_VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=30)
BACKDATE = datetime.timedelta(hours=1)
"""Certificates start an hour in the past, as client-go's cert.GenerateSelfSignedCertKeyWithFixtures makes
them, so that a client whose clock is a little behind still accepts a fresh one."""
ADMIN_USER = "system:admin"
FRONT_PROXY_CLIENT = "front-proxy-client"
WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class ServingNames:
    """The names a serving certificate must carry: DNS names and IP addresses, in SAN order."""

    dns: tuple[str, ...]
    ips: tuple[IPAddress, ...]


def serving_names(bind_address: str, extra: Sequence[str] = ()) -> ServingNames:
    """The bind address (a wildcard names no address), localhost, both loopbacks, the host name and every
    ``--tls-san``; each is an IP address or else a DNS name, as kube's --tls-san reads them."""
    dns: list[str] = []
    ips: list[IPAddress] = []
    names = [bind_address, "localhost", "127.0.0.1", "::1", socket.gethostname(), *extra]
    for name in names:
        if name in WILDCARD_ADDRESSES:
            continue
        try:
            address = ipaddress.ip_address(name.split("%", 1)[0])
        except ValueError:
            if name.lower() not in dns:
                dns.append(name.lower())
            continue
        if address not in ips:
            ips.append(address)
    return ServingNames(tuple(dns), tuple(ips))


@dataclass(frozen=True, slots=True)
class KeyPair:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


@dataclass(frozen=True, slots=True)
class PKI:
    """The server's certificates once bootstrapped. ``serving`` is None when the serving certificate is
    the user's own (--tls-cert-file)."""

    directory: Path
    ca: KeyPair
    admin: KeyPair
    serving: KeyPair | None
    front_proxy_ca: KeyPair
    """kubeadm's front-proxy-ca: the CA an aggregated backend trusts the front's X-Remote-* headers by
    (``--requestheader-client-ca-file``); apart from ``ca``, so that no client certificate of this server's
    users can pose as the proxy."""
    front_proxy_client: KeyPair
    """kubeadm's front-proxy-client (CN=front-proxy-client): the certificate the front presents to the
    backends it proxies to (``--proxy-client-cert-file``)."""

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def serving_cert_file(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def serving_key_file(self) -> Path:
        return self.directory / "apiserver.key"


def bootstrap(
    data_dir: Path, names: ServingNames | None, now: datetime.datetime | None = None
) -> PKI:
    """Load the PKI of ``data_dir``, creating or renewing what is missing, unreadable or due. ``names``:
    what the serving certificate must name (None: no serving certificate is made)."""
    now = now or datetime.datetime.now(datetime.UTC)
    directory = data_dir / "pki"
    directory.mkdir(mode=0o700, exist_ok=True)
    ca = _load(directory, "ca")
    if ca is None or not _fresh(ca, now) or not _issued_by(ca, ca):
        ca = _store(directory, "ca", _issue_ca(now))
    admin = _load(directory, "admin")
    if admin is None or not _fresh(admin, now) or not _issued_by(admin, ca):
        admin = _store(directory, "admin", _issue_admin(ca, now))
    serving = None
    if names is not None:
        serving = _load(directory, "apiserver")
        if (
            serving is None
            or not _fresh(serving, now)
            or not _issued_by(serving, ca)
            or not _names_covered(serving, names)
        ):
            serving = _store(directory, "apiserver", _issue_serving(ca, names, now))
    front_proxy_ca = _load(directory, "front-proxy-ca")
    if (
        front_proxy_ca is None
        or not _fresh(front_proxy_ca, now)
        or not _issued_by(front_proxy_ca, front_proxy_ca)
    ):
        front_proxy_ca = _store(directory, "front-proxy-ca", _issue_ca(now, "front-proxy-ca"))
    front_proxy_client = _load(directory, "front-proxy-client")
    if (
        front_proxy_client is None
        or not _fresh(front_proxy_client, now)
        or not _issued_by(front_proxy_client, front_proxy_ca)
    ):
        front_proxy_client = _store(
            directory,
            "front-proxy-client",
            issue_client(front_proxy_ca, FRONT_PROXY_CLIENT, (), now),
        )
    return PKI(directory, ca, admin, serving, front_proxy_ca, front_proxy_client)


def _load(directory: Path, name: str) -> KeyPair | None:
    """The pair stored as ``name``, None when either file is missing or unreadable (then it is made
    again: a half-written or foreign file must not stop the server from starting)."""
    try:
        certificate = x509.load_pem_x509_certificate((directory / f"{name}.crt").read_bytes())
        key = serialization.load_pem_private_key(
            (directory / f"{name}.key").read_bytes(), password=None
        )
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != (
        certificate.public_key()
    ):
        return None
    return KeyPair(certificate, key)


def _store(directory: Path, name: str, pair: KeyPair) -> KeyPair:
    """The key first: a certificate on disk always has its key next to it."""
    write_private(directory / f"{name}.key", pair.key_pem())
    write_private(directory / f"{name}.crt", pair.certificate_pem(), mode=0o644)
    return pair


def _fresh(pair: KeyPair, now: datetime.datetime) -> bool:
    certificate = pair.certificate
    return (
        certificate.not_valid_before_utc <= now
        and certificate.not_valid_after_utc - now > RENEW_BEFORE
    )


def _issued_by(pair: KeyPair, ca: KeyPair) -> bool:
    try:
        pair.certificate.verify_directly_issued_by(ca.certificate)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _names_covered(pair: KeyPair, names: ServingNames) -> bool:
    try:
        sans = pair.certificate.extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        ).value
    except x509.ExtensionNotFound:
        return False
    dns = {name.lower() for name in sans.get_values_for_type(x509.DNSName)}
    ips = set(sans.get_values_for_type(x509.IPAddress))
    return set(names.dns) <= dns and set(names.ips) <= ips


def _issue_ca(now: datetime.datetime, prefix: str = "apiforge-ca") -> KeyPair:
    """A self-signed CA named as kube-apiserver names its own (``<host>-ca@<unix time>``)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{prefix}@{int(now.timestamp())}")])
    builder = (
        _builder(name, key, now, CA_VALIDITY)
        .issuer_name(name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
    )
    return KeyPair(builder.sign(key, hashes.SHA256()), key)


def _issue_admin(ca: KeyPair, now: datetime.datetime) -> KeyPair:
    return issue_client(ca, ADMIN_USER, (MASTERS_GROUP,), now)


def issue_client(
    ca: KeyPair, user: str, groups: Sequence[str] = (), now: datetime.datetime | None = None
) -> KeyPair:
    """A client certificate for ``user`` in ``groups`` (CN and O, as kube's x509 authenticator reads
    them), signed by ``ca``: the admin's, and any other user's an operator (or a bench) makes."""
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        + [x509.NameAttribute(NameOID.COMMON_NAME, user)]
    )
    return _issue_leaf(
        ca, subject, ExtendedKeyUsageOID.CLIENT_AUTH, now or datetime.datetime.now(datetime.UTC)
    )


def _issue_serving(ca: KeyPair, names: ServingNames, now: datetime.datetime) -> KeyPair:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "apiforge")])
    alternatives: list[x509.GeneralName] = [x509.DNSName(name) for name in names.dns]
    alternatives += [x509.IPAddress(address) for address in names.ips]
    return _issue_leaf(
        ca,
        subject,
        ExtendedKeyUsageOID.SERVER_AUTH,
        now,
        x509.SubjectAlternativeName(alternatives),
    )


def _issue_leaf(
    ca: KeyPair,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    now: datetime.datetime,
    alternatives: x509.SubjectAlternativeName | None = None,
) -> KeyPair:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _builder(subject, key, now, LEAF_VALIDITY)
        .issuer_name(ca.certificate.subject)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()),
            critical=False,
        )
    )
    if alternatives is not None:
        builder = builder.add_extension(alternatives, critical=False)
    return KeyPair(builder.sign(ca.key, hashes.SHA256()), key)


def _builder(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    now: datetime.datetime,
    validity: datetime.timedelta,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )


def _key_usage(cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )
