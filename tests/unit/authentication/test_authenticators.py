"""The authenticator seam composed as kube-apiserver composes it: a union of authenticators whose users get
``system:authenticated``, then anonymous for requests none recognises but never for rejected credentials
(pkg/kubeapiserver/authenticator, k8s.io/apiserver pkg/authentication/{request/union,group})."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.authentication.authenticator import (
    AnonymousAuthenticator,
    AuthenticatedGroupAdder,
    AuthenticationError,
    Authenticator,
    UnionAuthenticator,
    request_authenticator,
)
from apiserver.authentication.user import ANONYMOUS, UserInfo
from tests.unit.filters.support import TokenFile

ALICE = UserInfo("alice", "u-1", ("devs",), {"scopes": ("a",)})
TOKENS = TokenFile(
    {"alice-token": ALICE, "robot": UserInfo("robot", groups=("system:authenticated",))}
)


def authenticate(authenticator: Authenticator, token: str = "") -> UserInfo | None:
    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    return asyncio.run(authenticator.authenticate({"type": "http", "headers": headers}))


def test_with_no_authenticator_every_request_is_anonymous() -> None:
    authenticator = request_authenticator(())
    assert isinstance(authenticator, AnonymousAuthenticator)
    assert authenticate(authenticator, "anything") == ANONYMOUS
    assert ANONYMOUS.as_json() == {
        "username": "system:anonymous",
        "groups": ["system:unauthenticated"],
    }


def test_an_authenticated_user_joins_system_authenticated() -> None:
    user = authenticate(request_authenticator([TOKENS]), "alice-token")
    assert user == UserInfo("alice", "u-1", ("devs", "system:authenticated"), {"scopes": ("a",)})


def test_a_user_already_in_system_authenticated_is_left_as_it_is() -> None:
    assert authenticate(request_authenticator([TOKENS]), "robot") == UserInfo(
        "robot", groups=("system:authenticated",)
    )


def test_a_request_without_credentials_is_anonymous_when_anonymous_is_enabled() -> None:
    assert authenticate(request_authenticator([TOKENS]), "") == ANONYMOUS
    assert authenticate(request_authenticator([TOKENS], anonymous=False), "") is None


def test_rejected_credentials_are_never_anonymous() -> None:
    with pytest.raises(AuthenticationError, match="invalid bearer token"):
        authenticate(request_authenticator([TOKENS]), "forged")


def test_a_union_tries_the_next_authenticator_after_an_error() -> None:
    other = TokenFile({"forged": UserInfo("mallory")})
    union = UnionAuthenticator([TOKENS, other])
    assert authenticate(union, "forged") == UserInfo("mallory")
    with pytest.raises(AuthenticationError, match="invalid bearer token; invalid bearer token"):
        authenticate(union, "unknown")


def test_a_fail_on_error_union_stops_at_the_first_error() -> None:
    union = UnionAuthenticator([TOKENS, AnonymousAuthenticator()], fail_on_error=True)
    with pytest.raises(AuthenticationError):
        authenticate(union, "forged")
    assert authenticate(union, "") == ANONYMOUS


def test_the_group_adder_leaves_anonymous_alone() -> None:
    assert authenticate(AuthenticatedGroupAdder(AnonymousAuthenticator())) == ANONYMOUS


def test_the_group_adder_answers_the_same_user_alike_and_another_afresh() -> None:
    """The adder remembers its last user: the same object (a remembered token's user) gets the same answer,
    and the next user is never given the previous one's."""
    adder = AuthenticatedGroupAdder(TOKENS)
    first = authenticate(adder, "alice-token")
    assert authenticate(adder, "alice-token") is first
    assert authenticate(adder, "robot") == UserInfo("robot", groups=("system:authenticated",))
    assert authenticate(adder, "alice-token") == first
    assert first == UserInfo("alice", "u-1", ("devs", "system:authenticated"), {"scopes": ("a",)})
