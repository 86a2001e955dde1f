"""The authentication filter (kube's WithAuthentication): the user on the scope, the Authorization header
gone after it, and kube's 401 Status for credentials that fail."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable

from apiserver.authentication.authenticator import SCOPE_STABLE_CREDENTIALS, request_authenticator
from apiserver.authentication.token import BearerTokenAuthenticator
from apiserver.authentication.tokenfile import TokenFileAuthenticator
from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import ASGIApp
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.pipeline import Exchange, Pipeline
from apiserver.filters.requestinfo import RequestInfoFilter
from tests.tokens import UNAUTHORIZED
from tests.unit.filters.support import TokenFile, echo, request

TOKENS = TokenFile({"alice-token": UserInfo("alice", groups=("devs",))})


def chain(anonymous: bool = True) -> ASGIApp:
    return Pipeline(
        [
            RequestInfoFilter(),
            AuthenticationFilter(request_authenticator([TOKENS], anonymous=anonymous)),
        ],
        echo,
    )


def test_a_request_without_credentials_is_anonymous() -> None:
    response = request(chain(), "GET", "/api/v1/namespaces/default/configmaps")
    assert response.status_code == 200
    assert response.json()["user"] == {
        "username": "system:anonymous",
        "groups": ["system:unauthenticated"],
    }
    assert response.json()["info"]["verb"] == "list"


def test_a_known_token_is_its_user_and_the_header_does_not_reach_the_app() -> None:
    response = request(chain(), "GET", "/version", [("Authorization", "Bearer alice-token")])
    assert response.json()["user"] == {
        "username": "alice",
        "groups": ["devs", "system:authenticated"],
    }
    assert "authorization" not in response.json()["headers"]
    assert "host" in response.json()["headers"]


def test_a_bad_token_is_401_as_kube_answers_it() -> None:
    # kube's Unauthorized handler: apierrors.NewUnauthorized("Unauthorized")
    response = request(chain(), "GET", "/api/v1/pods", [("Authorization", "Bearer forged")])
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/json"
    assert response.json() == UNAUTHORIZED


def test_without_anonymous_a_request_without_credentials_is_401() -> None:
    assert request(chain(anonymous=False), "GET", "/api").status_code == 401
    assert request(chain(anonymous=True), "GET", "/api").status_code == 200


class Broken:
    async def authenticate(self, scope: object) -> UserInfo | None:
        raise RuntimeError("the token webhook is down")


def test_an_authenticator_that_breaks_fails_the_request_with_401() -> None:
    app = Pipeline([RequestInfoFilter(), AuthenticationFilter(Broken())], echo)
    assert request(app, "GET", "/api").status_code == 401


def test_a_user_known_at_once_passes_without_a_coroutine_and_a_token_once_looked_up_is_known() -> (
    None
):
    alice = UserInfo("alice", groups=("devs",))
    authenticator = request_authenticator(
        [BearerTokenAuthenticator(TokenFileAuthenticator({"alice-token": alice}))]
    )
    step = AuthenticationFilter(authenticator)

    def exchange(headers: list[tuple[bytes, bytes]]) -> Exchange:
        scope = {"type": "http", "method": "GET", "path": "/api", "headers": headers}
        return Exchange(scope, echo, echo)  # type: ignore[arg-type]

    anonymous = exchange([])
    assert step.before(anonymous) is None  # answered at once
    assert anonymous.user is not None and anonymous.user.name == "system:anonymous"
    assert anonymous.scope[SCOPE_STABLE_CREDENTIALS] == math.inf

    with_token = [(b"authorization", b"Bearer alice-token")]
    first = exchange(list(with_token))
    looking_up = step.before(first)
    assert looking_up is not None  # the token is looked up once
    assert asyncio.run(_awaited(looking_up)) is True
    again = exchange(list(with_token))
    assert step.before(again) is None  # then remembered: known at once, as the same user
    assert again.user is first.user and again.user is not None
    assert again.user.groups == ("devs", "system:authenticated")
    assert again.scope["headers"] == [] and again.scope[SCOPE_STABLE_CREDENTIALS] == math.inf
    # a token nobody knows is still refused, through the lookup
    forged = request(
        Pipeline([RequestInfoFilter(), step], echo),
        "GET",
        "/api",
        [("Authorization", "Bearer forged")],
    )
    assert forged.status_code == 401


async def _awaited(pending: Awaitable[bool]) -> bool:
    return await pending
