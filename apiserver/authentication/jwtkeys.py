"""The keys of service-account tokens and what kube-apiserver does with them that names no kind
(kubernetes pkg/serviceaccount/jwt.go and openidmetadata.go): sign a JWT's claims with the one signing key
(RS256, its ``kid`` the SHA-256 of the public key, as kube derives it), verify a token's signature with any of
the verification keys and its issuer, times and audiences as kube's JWT authenticator does, and describe the
keys as OpenID Connect discovery and a JWKS (``/.well-known/openid-configuration``, ``/openid/v1/jwks``).

With no key files named, a 2048-bit RSA key is created once in the data directory (0600), as k3s creates
its service-account key at bootstrap."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import orjson
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from apiserver.authentication.authenticator import AuthenticationError

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
"""kube's documented example issuer (kube-apiserver --service-account-issuer), apiforge's default."""
SIGNING_KEY_FILE = "service-account.key"
JWKS_PATH = "/openid/v1/jwks"
OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration"
LEEWAY_SECONDS = 60
"""go-jose's DefaultLeeway, which kube's validation of exp, nbf and iat uses."""

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


class KeyFileError(ValueError):
    """A key file cannot be used; the server refuses to start (kube's words)."""


def key_id(public_key: PublicKey) -> str:
    """kube's keyIDFromPublicKey: the unpadded base64url SHA-256 of the key's PKIX DER."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _algorithm(key: PublicKey) -> str:
    if isinstance(key, rsa.RSAPublicKey):
        return "RS256"
    return _EC_ALGORITHMS.get(key.curve.name, "ES256")


@dataclass(frozen=True)
class JWTKeys:
    """The signing key, the verification keys (by key id), the issuers (the first is written into new
    tokens, all are accepted, as kube's repeated --service-account-issuer) and the JWKS URI."""

    signing_key: PrivateKey
    public_keys: dict[str, PublicKey]
    issuers: tuple[str, ...]
    jwks_uri: str

    @property
    def issuer(self) -> str:
        return self.issuers[0]

    def sign(self, claims: dict[str, Any]) -> str:
        public = self.signing_key.public_key()
        return jwt.encode(
            {"iss": self.issuer, **claims},
            self.signing_key,
            algorithm=_algorithm(public),
            headers={"kid": key_id(public)},
        )

    def issued_here(self, token: str) -> dict[str, Any] | None:
        """The unverified claims of a token that looks like a JWT of one of our issuers, else None: such a
        token is someone else's to judge (kube's hasCorrectIssuer)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            claims = orjson.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        except (binascii.Error, ValueError):
            return None
        if not isinstance(claims, dict) or claims.get("iss") not in self.issuers:
            return None
        return claims

    def verify(self, token: str) -> dict[str, Any]:
        """The claims of a token whose signature one of the keys verifies and whose times are valid now,
        with kube's messages for those that are not."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise AuthenticationError(f"invalid token: {error}") from None
        kid = header.get("kid")
        candidates = (
            [self.public_keys[kid]] if kid in self.public_keys else self.public_keys.values()
        )
        claims: dict[str, Any] | None = None
        for key in candidates:
            try:
                claims = jwt.decode(
                    token,
                    key,
                    algorithms=[_algorithm(key)],
                    options={"verify_signature": True, "verify_exp": False, "verify_nbf": False,
                             "verify_iat": False, "verify_aud": False, "verify_iss": False},
                )  # fmt: skip
                break
            except jwt.PyJWTError:
                continue
        if claims is None:
            raise AuthenticationError("invalid signature")
        _check_times(claims)
        return claims

    def audiences(
        self, claims: dict[str, Any], requested: Sequence[str], api: Sequence[str]
    ) -> tuple[str, ...]:
        """The token's audiences that the request asks for (the API audiences unless it names some), as
        kube's JWT authenticator intersects them; raises when none is left."""
        aud = claims.get("aud")
        token_audiences = (
            [aud] if isinstance(aud, str) else [a for a in aud or [] if isinstance(a, str)]
        )
        wanted = list(requested) or list(api)
        matched = tuple(a for a in token_audiences if a in wanted)
        if not matched and api:
            raise AuthenticationError(
                f"token audiences {_go_strings(token_audiences)} is invalid for the target audiences"
                f" {_go_strings(wanted)}"
            )
        return matched

    def openid_configuration(self) -> bytes:
        """kube's openIDMetadata, fields in its order."""
        return orjson.dumps(
            {
                "issuer": self.issuer,
                "jwks_uri": self.jwks_uri,
                "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": sorted(
                    {_algorithm(key) for key in self.public_keys.values()}
                ),
            }
        )

    def jwks(self) -> bytes:
        """The verification keys as a JSON Web Key Set (go-jose's field order)."""
        keys = []
        for kid, key in self.public_keys.items():
            jwk: dict[str, Any] = {"use": "sig", "kty": "", "kid": kid, "alg": _algorithm(key)}
            jwk.update(
                orjson.loads(jwt.algorithms.get_default_algorithms()[jwk["alg"]].to_jwk(key))
            )
            jwk.pop("key_ops", None)
            keys.append(jwk)
        return orjson.dumps({"keys": keys})


def _go_strings(values: Sequence[str]) -> str:
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(orjson.dumps(v).decode() for v in values) + "]"


def _check_times(claims: dict[str, Any]) -> None:
    now = time.time()
    exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    for value in (exp, nbf, iat):
        if value is not None and not isinstance(value, int | float):
            raise AuthenticationError("invalid token: a time claim is not a number")
    if isinstance(exp, int | float) and now - LEEWAY_SECONDS > exp:
        raise AuthenticationError("service account token has expired")
    if isinstance(nbf, int | float) and now + LEEWAY_SECONDS < nbf:
        raise AuthenticationError("service account token is not valid yet")
    if isinstance(iat, int | float) and now + LEEWAY_SECONDS < iat:
        raise AuthenticationError("service account token is issued in the future")


def load_jwt_keys(
    signing_key_file: Path,
    key_files: Sequence[Path],
    issuers: Sequence[str],
    jwks_uri: str,
) -> JWTKeys:
    """The keys of kube-apiserver's --service-account-signing-key-file and --service-account-key-file
    (the signing key verifies too, as kube defaults the key files to it); KeyFileError in kube's words."""
    signing_key = _private_key(signing_key_file)
    public_keys = {key_id(signing_key.public_key()): signing_key.public_key()}
    for path in key_files:
        for key in _public_keys(path):
            public_keys.setdefault(key_id(key), key)
    return JWTKeys(signing_key, public_keys, tuple(issuers), jwks_uri)


def ensure_signing_key(path: Path) -> None:
    """Create an RSA key at ``path`` (0600, PKCS#1 PEM as kube's keyutil writes it) unless one is there."""
    if path.exists():
        return
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
    os.replace(temporary, path)


def _pem_blocks(path: Path) -> list[bytes]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise KeyFileError(f"open {path}: {error.strerror}") from None
    blocks = []
    for chunk in data.split(b"-----BEGIN ")[1:]:
        end = chunk.find(b"-----END ")
        close = chunk.find(b"-----", end + 9) if end >= 0 else -1
        if close >= 0:
            blocks.append(b"-----BEGIN " + chunk[: close + 5])
    return blocks


def _private_key(path: Path) -> PrivateKey:
    for block in _pem_blocks(path):
        try:
            key = serialization.load_pem_private_key(block, password=None)
        except (ValueError, TypeError):
            continue
        if isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
            return key
    raise KeyFileError(
        f"failed to parse service-account-issuer-key-file: {path}: data does not contain a valid RSA"
        " or ECDSA private key"
    )


def _public_keys(path: Path) -> list[PublicKey]:
    keys: list[PublicKey] = []
    for block in _pem_blocks(path):
        key: object = None
        for load in (_load_public, _load_private_public, _load_certificate_public):
            try:
                key = load(block)
                break
            except (ValueError, TypeError):
                continue
        if isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
            keys.append(key)
    if not keys:
        raise KeyFileError(
            f'failed to parse key file "{path}": data does not contain any valid RSA or ECDSA public keys'
        )
    return keys


def _load_public(block: bytes) -> object:
    return serialization.load_pem_public_key(block)


def _load_private_public(block: bytes) -> object:
    return serialization.load_pem_private_key(block, password=None).public_key()


def _load_certificate_public(block: bytes) -> object:
    return x509.load_pem_x509_certificate(block).public_key()
