"""The authenticator seam composed as kube-apiserver composes it: a union of authenticators whose users get
``system:authenticated``, then anonymous for requests none recognises but never for rejected credentials
(pkg/kubeapiserver/authenticator, k8s.io/apiserver pkg/authentication/{request/union,group})."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from apiserver.authentication.authenticator import (
    SCOPE_STABLE_CREDENTIALS,
    AnonymousAuthenticator,
    AuthenticationError,
    Authenticator,
    request_authenticator,
    vouch_stable,
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


def test_the_anonymous_fallback_vouches_for_stable_credentials() -> None:
    """A request without credentials is anonymous for as long as the server runs (its answer may be
    replayed); an authenticated one is vouched for by its authenticator, not by the fallback."""
    authenticator = request_authenticator([TOKENS])
    scope: dict[str, Any] = {"type": "http", "headers": []}
    assert asyncio.run(authenticator.authenticate(scope)) == ANONYMOUS
    assert scope.get(SCOPE_STABLE_CREDENTIALS)
    scope = {"type": "http", "headers": [(b"authorization", b"Bearer robot")]}
    asyncio.run(authenticator.authenticate(scope))
    assert not scope.get(SCOPE_STABLE_CREDENTIALS)


def test_rejected_credentials_are_never_anonymous() -> None:
    with pytest.raises(AuthenticationError, match="invalid bearer token"):
        authenticate(request_authenticator([TOKENS]), "forged")


def test_the_next_authenticator_is_asked_after_an_error() -> None:
    other = TokenFile({"forged": UserInfo("mallory")})
    authenticator = request_authenticator([TOKENS, other])
    assert authenticate(authenticator, "forged") == UserInfo(
        "mallory", groups=("system:authenticated",)
    )
    with pytest.raises(AuthenticationError, match="invalid bearer token; invalid bearer token"):
        authenticate(authenticator, "unknown")
    with pytest.raises(AuthenticationError, match="invalid bearer token; invalid bearer token"):
        authenticate(request_authenticator([TOKENS, other], anonymous=False), "unknown")


def test_the_anonymous_user_is_left_alone() -> None:
    assert authenticate(request_authenticator([AnonymousAuthenticator()])) == ANONYMOUS


def test_the_same_user_is_answered_alike_and_another_afresh() -> None:
    """The last user found is remembered: the same object (a remembered token's user) gets the same
    answer, and the next user is never given the previous one's."""
    authenticator = request_authenticator([TOKENS])
    first = authenticate(authenticator, "alice-token")
    assert authenticate(authenticator, "alice-token") is first
    assert authenticate(authenticator, "robot") == UserInfo(
        "robot", groups=("system:authenticated",)
    )
    assert authenticate(authenticator, "alice-token") == first
    assert first == UserInfo("alice", "u-1", ("devs", "system:authenticated"), {"scopes": ("a",)})


class _Refusing:
    """Refuses every request, the refusal ``lasting`` or not."""

    def __init__(self, lasting: bool) -> None:
        self.lasting = lasting

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        raise AuthenticationError("refused", lasting=self.lasting)


class _Vouching:
    """Vouches for the request's credentials, and finds ``user`` (None: nobody, as the request-header
    authenticator does for a proxy's certificate without user headers)."""

    def __init__(self, user: UserInfo | None) -> None:
        self.user = user

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        vouch_stable(scope)
        return self.user


class _Anyone:
    """Finds the same user for every request, and vouches for nothing (as a webhook's token)."""

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        return ALICE


def vouched(*authenticators: Authenticator) -> bool:
    """Whether the request's user was vouched for (endpoints/replay.py may replay its answer)."""
    scope: dict[str, Any] = {"type": "http", "headers": []}
    assert asyncio.run(request_authenticator(authenticators).authenticate(scope)) is not None
    return SCOPE_STABLE_CREDENTIALS in scope


def test_only_the_authenticator_that_finds_the_user_vouches_for_it() -> None:
    alice, nobody = _Vouching(ALICE), _Vouching(None)
    assert vouched(nobody, alice)
    assert not vouched(nobody, _Anyone())  # found by one that vouches for nothing
    assert vouched(nobody)  # then anonymous, which vouches


def test_a_user_found_after_a_refusal_that_may_end_is_not_vouched_for() -> None:
    """A certificate not valid yet decides once it is valid: the token after it decides until then."""
    assert vouched(_Refusing(lasting=True), _Vouching(ALICE))
    assert not vouched(_Refusing(lasting=False), _Vouching(ALICE))
