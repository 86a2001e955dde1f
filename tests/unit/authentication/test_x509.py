"""The x509 authenticator as kube's (k8s.io/apiserver pkg/authentication/request/x509, x509_test.go's cases):
CN is the user, O the groups; a chain through an intermediate the client sent; expired, not yet valid, from
another CA, without the clientAuth usage, through a non-CA "intermediate": refused; no CommonName: nobody;
and one verification per connection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cryptography.x509.oid import ExtendedKeyUsageOID

from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.user import CREDENTIAL_ID, UserInfo
from apiserver.authentication.x509 import VERDICT_KEY, X509Authenticator
from tests import certs

ROOT = certs.ca()


def scope(*chain: certs.Pair) -> dict[str, Any]:
    """An ASGI scope with the TLS extension as the connection sets it."""
    return {"extensions": {"tls": {"client_cert_chain": [pair.pem for pair in chain]}}}


def authenticate(request: dict[str, Any]) -> UserInfo | None:
    return asyncio.run(X509Authenticator([ROOT.certificate]).authenticate(request))


def user(pair: certs.Pair, name: str, *groups: str) -> UserInfo:
    """The user a certificate authenticates as: its credential named by fingerprint, as kube 1.34 does."""
    return UserInfo(name, groups=groups, extra={CREDENTIAL_ID: (pair.credential_id,)})


def refused(*chain: certs.Pair) -> AuthenticationError:
    with pytest.raises(AuthenticationError) as raised:
        authenticate(scope(*chain))
    return raised.value


def refusal(*chain: certs.Pair) -> str:
    return str(refused(*chain))


def test_the_common_name_is_the_user_and_the_organizations_its_groups() -> None:
    alice = certs.client(ROOT, "alice", ("dev", "ops"))
    assert authenticate(scope(alice)) == user(alice, "alice", "dev", "ops")


def test_a_version_1_certificate_without_extensions_authenticates_as_in_go() -> None:
    """What `openssl x509 -req -CA ...` makes; Go accepts it (no extended key usage: any usage)."""
    bob = certs.client(ROOT, "bob", ("dev",), version_1=True)
    assert bob.certificate.version.name == "v1"
    assert authenticate(scope(bob)) == user(bob, "bob", "dev")


def test_any_extended_key_usage_will_do() -> None:
    carol = certs.client(ROOT, "carol", usage=ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE)
    assert authenticate(scope(carol)) == user(carol, "carol")


def test_a_chain_through_an_intermediate_the_client_sent() -> None:
    intermediate = certs.ca("team-ca", ROOT)
    dave = certs.client(intermediate, "dave", ("team",))
    assert authenticate(scope(dave, intermediate)) == user(dave, "dave", "team")
    assert "signed by unknown authority" in refusal(dave)  # without it


def test_an_intermediate_that_is_no_ca_signs_nothing() -> None:
    impostor = certs.client(ROOT, "impostor")
    eve = certs.client(impostor, "eve")
    assert "not authorized to sign other certificates" in refusal(eve, impostor)


def test_an_expired_certificate_is_refused() -> None:
    old = certs.client(
        ROOT, "old", not_before=certs.NOW - 10 * certs.DAY, not_after=certs.NOW - certs.DAY
    )
    message = refusal(old)
    assert "x509: certificate has expired or is not yet valid: current time" in message
    assert 'subject="CN=old"' in message  # kube names the certificate (certificateIdentifier)


def test_a_certificate_not_yet_valid_is_refused() -> None:
    early = certs.client(ROOT, "early", not_before=certs.NOW + certs.DAY)
    assert "is before" in refusal(early)


def test_a_certificate_from_another_ca_is_refused() -> None:
    stranger = certs.client(certs.ca("other-ca"), "alice", ("system:masters",))
    assert "x509: certificate signed by unknown authority" in refusal(stranger)


def test_a_certificate_for_servers_only_is_refused() -> None:
    server = certs.client(ROOT, "server", usage=ExtendedKeyUsageOID.SERVER_AUTH)
    assert "incompatible key usage" in refusal(server)


def test_an_unreadable_certificate_is_refused() -> None:
    with pytest.raises(AuthenticationError):
        authenticate({"extensions": {"tls": {"client_cert_chain": ["not a certificate"]}}})


def test_without_a_common_name_nobody_is_authenticated() -> None:
    nameless = certs.client(ROOT, "", ("dev",))
    assert authenticate(scope(nameless)) is None


def test_without_tls_or_a_client_certificate_nobody_is_authenticated() -> None:
    assert authenticate({}) is None
    assert authenticate({"extensions": {}}) is None
    assert authenticate({"extensions": {"tls": {"client_cert_chain": []}}}) is None


def test_a_connection_is_verified_once_until_its_certificate_expires() -> None:
    alice = certs.client(ROOT, "alice", not_after=certs.NOW + certs.DAY)
    request = scope(alice)
    authenticator = X509Authenticator([ROOT.certificate])
    assert asyncio.run(authenticator.authenticate(request)) == user(alice, "alice")
    verdict = request["extensions"]["tls"][VERDICT_KEY]
    request["extensions"]["tls"]["client_cert_chain"] = ["unread"]  # the cached verdict answers
    assert asyncio.run(authenticator.authenticate(request)) == user(alice, "alice")
    assert request["extensions"]["tls"][VERDICT_KEY] is verdict
    request["extensions"]["tls"]["client_cert_chain"] = [alice.pem]
    authenticator.clock = lambda: (
        certs.NOW + 2 * certs.DAY
    ).timestamp()  # the connection outlives it
    with pytest.raises(AuthenticationError, match="expired"):
        asyncio.run(authenticator.authenticate(request))


def test_only_a_certificate_not_yet_valid_may_pass_later() -> None:
    """What another authenticator finds after a lasting refusal may be replayed (endpoints/replay.py);
    after a certificate not valid yet, which decides once it is, it may not."""
    early = certs.client(ROOT, "early", not_before=certs.NOW + certs.DAY)
    old = certs.client(
        ROOT, "old", not_before=certs.NOW - 10 * certs.DAY, not_after=certs.NOW - certs.DAY
    )
    stranger = certs.client(certs.ca("other-ca"), "alice")
    assert not refused(early).lasting
    assert refused(old).lasting
    assert refused(stranger).lasting
