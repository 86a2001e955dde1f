"""The bearer-token request authenticator and the token authenticators' composition, as kube's
request/bearertoken, token/union and WrapAudienceAgnosticToken behave."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from apiserver.authentication.authenticator import SCOPE_STABLE_CREDENTIALS, AuthenticationError
from apiserver.authentication.token import (
    AudienceAgnostic,
    BearerTokenAuthenticator,
    TokenResponse,
    UnionTokenAuthenticator,
)
from apiserver.authentication.tokenfile import TokenFileAuthenticator
from apiserver.authentication.user import UserInfo

ALICE = UserInfo("alice", "1")


class Refuses:
    """Knows every token that starts with "bad" and refuses it."""

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        if token.startswith("bad"):
            raise AuthenticationError(f"{token} is expired")
        return None


def scope(*headers: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"type": "http", "headers": list(headers)}


def bearer(value: bytes) -> dict[str, Any]:
    return scope((b"authorization", value))


AUTHENTICATOR = BearerTokenAuthenticator(TokenFileAuthenticator({"good": ALICE}))


@pytest.mark.parametrize(
    "request_scope",
    [
        scope(),
        bearer(b"Basic YWxpY2U6cGFzcw=="),
        bearer(b"Bearer"),
        bearer(b"Bearer "),
        bearer(
            b"Bearer  good"
        ),  # kube splits on single spaces: the token is the empty second field
        bearer(b"Token good"),
    ],
    ids=["none", "basic", "no-token", "empty-token", "two-spaces", "other-scheme"],
)
def test_a_request_without_a_bearer_token_is_not_this_authenticators(
    request_scope: dict[str, Any],
) -> None:
    assert asyncio.run(AUTHENTICATOR.authenticate(request_scope)) is None


@pytest.mark.parametrize("value", [b"Bearer good", b"bearer good", b"BEARER good trailing"])
def test_the_scheme_is_case_insensitive_and_the_token_the_second_field(value: bytes) -> None:
    assert asyncio.run(AUTHENTICATOR.authenticate(bearer(value))) == ALICE


def test_a_token_nobody_knows_fails_the_request_with_kubes_words() -> None:
    with pytest.raises(AuthenticationError, match=r"^invalid bearer token$"):
        asyncio.run(AUTHENTICATOR.authenticate(bearer(b"Bearer unknown")))


def test_the_union_takes_the_first_that_knows_the_token_and_reports_refusals() -> None:
    union = UnionTokenAuthenticator([Refuses(), TokenFileAuthenticator({"good": ALICE})])
    response = asyncio.run(union.authenticate_token("good", ()))
    assert response is not None and response.user == ALICE
    assert asyncio.run(union.authenticate_token("other", ())) is None
    with pytest.raises(AuthenticationError, match="bad-one is expired"):
        asyncio.run(union.authenticate_token("bad-one", ()))


def test_audience_agnostic_tokens_are_for_the_api_audiences_only() -> None:
    agnostic = AudienceAgnostic(TokenFileAuthenticator({"good": ALICE}), ("https://api",))
    for asked in ((), ("https://api",), ("other", "https://api")):
        response = asyncio.run(agnostic.authenticate_token("good", asked))
        # a token file's verdict stands while the server runs (what lets an answer be replayed)
        assert response == TokenResponse(ALICE, ("https://api",), stable=True)
    assert asyncio.run(agnostic.authenticate_token("good", ("vault",))) is None


class Counted:
    """A token authenticator that counts how often it is asked: "file-N" tokens are a token file's (stable
    answers), "sa" a service account's (asked afresh every time), anything else unknown."""

    def __init__(self) -> None:
        self.asked = 0

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        self.asked += 1
        if token.startswith("file-"):
            return TokenResponse(UserInfo(token), stable=True)
        if token == "sa":
            return TokenResponse(UserInfo("system:serviceaccount:default:builder"))
        return None


def test_a_token_file_user_is_remembered_and_a_service_account_asked_every_time() -> None:
    counted = Counted()
    authenticator = BearerTokenAuthenticator(counted)
    for _ in range(3):
        user = asyncio.run(authenticator.authenticate(bearer(b"Bearer file-1")))
        assert user == UserInfo("file-1")
    assert counted.asked == 1
    remembered = bearer(b"Bearer file-1")
    asyncio.run(authenticator.authenticate(remembered))
    assert remembered.get(SCOPE_STABLE_CREDENTIALS)  # its answer may still be replayed
    for _ in range(3):
        account = bearer(b"Bearer sa")
        asyncio.run(authenticator.authenticate(account))
        assert not account.get(SCOPE_STABLE_CREDENTIALS)
    assert counted.asked == 4
    # a remembered token is compared whole: another token is never taken for it
    assert asyncio.run(authenticator.authenticate(bearer(b"Bearer file-"))) == UserInfo("file-")
    assert counted.asked == 5


def test_the_remembered_tokens_are_bounded_and_refused_ones_never_kept() -> None:
    """Neither many valid tokens nor a flood of invalid ones grows the memo past its limit."""
    authenticator = BearerTokenAuthenticator(Counted())
    limit = authenticator.remembered.limit
    for n in range(limit + 10):
        asyncio.run(authenticator.authenticate(bearer(f"Bearer file-{n}".encode())))
        assert len(authenticator.remembered) <= limit
    kept = len(authenticator.remembered)
    for n in range(100):
        with pytest.raises(AuthenticationError):
            asyncio.run(authenticator.authenticate(bearer(f"Bearer guess-{n}".encode())))
    assert len(authenticator.remembered) == kept
