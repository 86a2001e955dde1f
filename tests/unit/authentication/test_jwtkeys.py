"""Service-account token keys (kubernetes pkg/serviceaccount/jwt.go, openidmetadata.go): the key created at
bootstrap, kube's key ids, signing and verifying, kube's messages for the tokens it refuses, and the OIDC
discovery documents."""

from __future__ import annotations

import base64
import hashlib
import stat
import time
from pathlib import Path

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.jwtkeys import (
    DEFAULT_ISSUER,
    JWTKeys,
    KeyFileError,
    ensure_signing_key,
    key_id,
    load_jwt_keys,
)

JWKS_URI = "https://127.0.0.1:6443/openid/v1/jwks"


@pytest.fixture(scope="module")
def key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("keys")
    ensure_signing_key(directory / "one.key")
    ensure_signing_key(directory / "two.key")
    return directory


def keys_of(key_dir: Path, signing: str = "one.key", *verifying: str) -> JWTKeys:
    return load_jwt_keys(
        key_dir / signing, [key_dir / name for name in verifying], (DEFAULT_ISSUER,), JWKS_URI
    )


def test_the_bootstrap_key_is_private_and_kept(key_dir: Path) -> None:
    path = key_dir / "one.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    before = path.read_bytes()
    ensure_signing_key(path)
    assert path.read_bytes() == before


def test_the_key_id_is_kubes_sha256_of_the_pkix_der(key_dir: Path) -> None:
    public = keys_of(key_dir).signing_key.public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    expected = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
    assert key_id(public) == expected and len(expected) == 43


def test_a_signed_token_names_its_issuer_and_key_and_verifies(key_dir: Path) -> None:
    keys = keys_of(key_dir)
    token = keys.sign({"sub": "x", "exp": int(time.time()) + 60})
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "RS256"
    assert header["kid"] == key_id(keys.signing_key.public_key())
    assert (
        keys.issued_here(token)
        == {"iss": DEFAULT_ISSUER, **keys.verify(token)}
        == keys.verify(token)
    )
    assert keys.verify(token)["sub"] == "x"


def test_tokens_of_other_issuers_and_non_jwts_are_left_to_others(key_dir: Path) -> None:
    keys = keys_of(key_dir)
    other = load_jwt_keys(key_dir / "one.key", [], ("https://elsewhere",), JWKS_URI)
    assert keys.issued_here(other.sign({"sub": "x"})) is None
    for token in ("plain-token", "a.b", "a.!!!.c", "a.bnVsbA.c", f"x.{'e30'}.y"):
        assert keys.issued_here(token) is None


def test_a_token_signed_by_an_unknown_key_has_an_invalid_signature(key_dir: Path) -> None:
    token = keys_of(key_dir, "two.key").sign({"sub": "x"})
    with pytest.raises(AuthenticationError, match=r"^invalid signature$"):
        keys_of(key_dir).verify(token)


def test_verification_keys_accept_a_retired_signing_key(key_dir: Path) -> None:
    """--service-account-key-file holds old keys while tokens they signed are still out (key rotation)."""
    old_token = keys_of(key_dir, "two.key").sign({"sub": "x"})
    rotated = keys_of(key_dir, "one.key", "two.key")
    assert rotated.verify(old_token)["sub"] == "x"
    assert len(orjson.loads(rotated.jwks())["keys"]) == 2


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ({"exp": -120}, "service account token has expired"),
        ({"nbf": 120}, "service account token is not valid yet"),
        ({"iat": 120}, "service account token is issued in the future"),
        ({"exp": "soon"}, "invalid token: a time claim is not a number"),
    ],
)
def test_times_are_checked_with_go_joses_minute_of_leeway(
    key_dir: Path, claims: dict[str, object], message: str
) -> None:
    keys = keys_of(key_dir)
    now = int(time.time())
    dated = {k: now + v if isinstance(v, int) else v for k, v in claims.items()}
    with pytest.raises(AuthenticationError, match=f"^{message}$"):
        keys.verify(keys.sign(dated))
    within = {k: now + (v // 4) for k, v in claims.items() if isinstance(v, int)}
    keys.verify(keys.sign(within))  # 30 seconds off is within the leeway


def test_a_tampered_token_is_refused(key_dir: Path) -> None:
    keys = keys_of(key_dir)
    header, payload, signature = keys.sign({"sub": "alice"}).split(".")
    forged = base64.urlsafe_b64encode(b'{"iss":"%s","sub":"admin"}' % DEFAULT_ISSUER.encode())
    with pytest.raises(AuthenticationError, match=r"^invalid signature$"):
        keys.verify(f"{header}.{forged.decode().rstrip('=')}.{signature}")
    with pytest.raises(AuthenticationError, match=r"^invalid token: "):
        keys.verify(f"!!.{payload}.{signature}")


def test_audiences_intersect_the_requested_or_the_apis(key_dir: Path) -> None:
    keys = keys_of(key_dir)
    claims = {"aud": ["a", "b"]}
    assert keys.audiences(claims, (), ("b", "c")) == ("b",)
    assert keys.audiences(claims, ("a",), ("c",)) == ("a",)
    assert keys.audiences({"aud": "a"}, ("a",), ("c",)) == ("a",)
    with pytest.raises(AuthenticationError) as refused:
        keys.audiences(claims, ("vault",), ("c",))
    assert (
        str(refused.value)
        == 'token audiences ["a" "b"] is invalid for the target audiences ["vault"]'
    )


def test_the_openid_configuration_and_jwks_are_kubes(key_dir: Path) -> None:
    keys = keys_of(key_dir)
    assert orjson.loads(keys.openid_configuration()) == {
        "issuer": DEFAULT_ISSUER,
        "jwks_uri": JWKS_URI,
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }
    [jwk] = orjson.loads(keys.jwks())["keys"]
    assert list(jwk) == ["use", "kty", "kid", "alg", "n", "e"]
    assert (jwk["use"], jwk["kty"], jwk["alg"], jwk["e"]) == ("sig", "RSA", "RS256", "AQAB")
    assert jwk["kid"] == key_id(keys.signing_key.public_key())
    # what a relying party does with them: verify a token with the published key
    public = jwt.PyJWK(jwk).key
    token = keys.sign({"aud": ["x"]})
    assert jwt.decode(token, public, algorithms=["RS256"], audience="x")["iss"] == DEFAULT_ISSUER


def test_an_ecdsa_signing_key_signs_es256(tmp_path: Path) -> None:
    path = tmp_path / "ec.key"
    path.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    keys = load_jwt_keys(path, [], (DEFAULT_ISSUER,), JWKS_URI)
    token = keys.sign({"sub": "x"})
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
    assert keys.verify(token)["sub"] == "x"


def test_unusable_key_files_are_refused_in_kubes_words(tmp_path: Path, key_dir: Path) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n")
    with pytest.raises(
        KeyFileError, match="data does not contain a valid RSA or ECDSA private key"
    ):
        load_jwt_keys(garbage, [], (DEFAULT_ISSUER,), JWKS_URI)
    with pytest.raises(KeyFileError) as refused:
        load_jwt_keys(key_dir / "one.key", [garbage], (DEFAULT_ISSUER,), JWKS_URI)
    assert str(refused.value) == (
        f'failed to parse key file "{garbage}": data does not contain any valid RSA or ECDSA public keys'
    )
    with pytest.raises(KeyFileError, match="No such file"):
        load_jwt_keys(tmp_path / "missing.key", [], (DEFAULT_ISSUER,), JWKS_URI)


def test_a_public_key_file_verifies(tmp_path: Path, key_dir: Path) -> None:
    public = keys_of(key_dir, "two.key").signing_key.public_key()
    path = tmp_path / "two.pub"
    path.write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    keys = load_jwt_keys(key_dir / "one.key", [path], (DEFAULT_ISSUER,), JWKS_URI)
    assert keys.verify(keys_of(key_dir, "two.key").sign({"sub": "y"}))["sub"] == "y"
