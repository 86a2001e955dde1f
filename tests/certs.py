"""Certificates for tests, made with ``cryptography`` as a user would with openssl: CAs, intermediates and client
certificates with any validity, usage and version, and their files."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOW = datetime.datetime.now(datetime.UTC)
DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Pair:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> str:
        return self.certificate.public_bytes(serialization.Encoding.PEM).decode()

    @property
    def credential_id(self) -> str:
        """kube's credential-id of a client certificate: the SHA-256 of its DER bytes, in hex."""
        der = self.certificate.public_bytes(serialization.Encoding.DER)
        return f"X509SHA256={hashlib.sha256(der).hexdigest()}"

    @property
    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )

    def write(self, directory: Path, name: str, *chain: Pair) -> tuple[Path, Path]:
        """``name``.crt (with ``chain`` after the certificate) and ``name``.key; their paths."""
        certificate, key = directory / f"{name}.crt", directory / f"{name}.key"
        certificate.write_text(self.pem + "".join(link.pem for link in chain))
        key.write_bytes(self.key_pem)
        return certificate, key


def load(certificate: Path, key: Path) -> Pair:
    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    assert isinstance(private, ec.EllipticCurvePrivateKey)
    return Pair(x509.load_pem_x509_certificate(certificate.read_bytes()), private)


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    if common_name:
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def ca(name: str = "test-ca", issuer: Pair | None = None, *, days: int = 30) -> Pair:
    """A root CA, or with ``issuer`` an intermediate signed by it."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(issuer.certificate.subject if issuer else _name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - DAY)
        .not_valid_after(NOW + days * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    )
    return Pair(builder.sign(issuer.key if issuer else key, hashes.SHA256()), key)


def client(
    issuer: Pair,
    common_name: str,
    organizations: tuple[str, ...] = (),
    *,
    usage: x509.ObjectIdentifier | None = ExtendedKeyUsageOID.CLIENT_AUTH,
    not_before: datetime.datetime = NOW - DAY,
    not_after: datetime.datetime = NOW + 30 * DAY,
    version_1: bool = False,
    is_ca: bool = False,
) -> Pair:
    """A client certificate; ``usage`` None: no extended key usage; ``version_1``: no extensions at
    all (what `openssl x509 -req -CA` makes without an extension file)."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organizations))
        .issuer_name(issuer.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
    )
    if is_ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
    if usage is not None and not version_1:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    certificate = builder.sign(issuer.key, hashes.SHA256())
    if version_1:
        certificate = _as_version_1(certificate, issuer)
    return Pair(certificate, key)


def serving(issuer: Pair, address: str, dns_names: tuple[str, ...] = ()) -> Pair:
    """A serving certificate for the IP ``address`` (and ``dns_names``)."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name("serving"))
        .issuer_name(issuer.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - DAY)
        .not_valid_after(NOW + 30 * DAY)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.IPAddress(ipaddress.ip_address(address)),
                    *(x509.DNSName(name) for name in dns_names),
                ]
            ),
            False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
    )
    return Pair(builder.sign(issuer.key, hashes.SHA256()), key)


def _as_version_1(certificate: x509.Certificate, issuer: Pair) -> x509.Certificate:
    """The same certificate re-encoded as X.509 version 1 (cryptography builds v3 only): the DER's
    version field is dropped and the TBS signed again."""
    tbs = bytearray(certificate.tbs_certificate_bytes)
    # TBSCertificate ::= SEQUENCE { [0] EXPLICIT Version (a0 03 02 01 02), serial ... }
    header = 2 if tbs[1] < 0x80 else 2 + (tbs[1] & 0x7F)
    assert tbs[header : header + 5] == b"\xa0\x03\x02\x01\x02"
    body = tbs[header + 5 :]
    tbs_v1 = _der_sequence(bytes(body))
    signature = issuer.key.sign(tbs_v1, ec.ECDSA(hashes.SHA256()))
    algorithm = _der_sequence(bytes.fromhex("06082a8648ce3d040302"))  # ecdsa-with-SHA256
    bits = b"\x03" + _der_length(len(signature) + 1) + b"\x00" + signature
    return x509.load_der_x509_certificate(_der_sequence(tbs_v1 + algorithm + bits))


def _der_length(length: int) -> bytes:
    if length < 0x80:
        return bytes([length])
    encoded = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(encoded)]) + encoded


def _der_sequence(content: bytes) -> bytes:
    return b"\x30" + _der_length(len(content)) + content
