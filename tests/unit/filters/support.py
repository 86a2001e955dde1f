"""What the filter tests share: an app that answers with what the chain put on the scope, an authorizer
driven by a rule that records every question, and an HTTP client speaking to an ASGI app in-process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from apiserver.authentication.authenticator import AuthenticationError
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes, Decision, Rules
from apiserver.endpoints.http import (
    SCOPE_REQUEST_INFO,
    SCOPE_USER,
    ASGIApp,
    Receive,
    Scope,
    Send,
    respond_json,
)

BASE_URL = "http://apiforge.test"


async def echo(scope: Scope, receive: Receive, send: Send) -> None:
    """200 with the user and request info the filters left on the scope, and the headers that reached it."""
    user: UserInfo | None = scope.get(SCOPE_USER)
    info = scope.get(SCOPE_REQUEST_INFO)
    await respond_json(
        send,
        200,
        {
            "user": user.as_json() if user is not None else None,
            "info": info._asdict() if info is not None else None,
            "headers": sorted({name.decode() for name, _ in scope["headers"]}),
        },
    )


class TokenFile:
    """A static bearer-token table (kube's --token-auth-file): a token it does not know is an error."""

    def __init__(self, users: Mapping[str, UserInfo]) -> None:
        self.users = users

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        for name, value in scope["headers"]:
            if name == b"authorization" and value.startswith(b"Bearer "):
                user = self.users.get(value[7:].decode())
                if user is None:
                    raise AuthenticationError("invalid bearer token")
                return user
        return None


class RuleAuthorizer:
    """Allows what ``rule`` allows (else ``refusal``, with ``reason``), and keeps every question asked."""

    def __init__(
        self,
        rule: Callable[[Attributes], bool],
        reason: str = "",
        refusal: Decision = Decision.NO_OPINION,
    ) -> None:
        self.rule = rule
        self.reason = reason
        self.refusal = refusal
        self.asked: list[Attributes] = []

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        self.asked.append(attributes)
        if self.rule(attributes):
            return Decision.ALLOW, ""
        return self.refusal, self.reason

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules(incomplete=True)


class FailingAuthorizer:
    """An authorizer that cannot answer (a webhook that is down)."""

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        raise ConnectionError("the authorization webhook is down")

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()


def run(app: ASGIApp, exchange: Callable[[httpx.AsyncClient], Awaitable[Any]]) -> Any:
    """Run ``exchange`` with a client of ``app`` (no socket: httpx's ASGI transport)."""

    async def main() -> Any:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            return await exchange(client)

    return asyncio.run(main())


def request(
    app: ASGIApp, method: str, path: str, headers: list[tuple[str, str]] | None = None
) -> httpx.Response:
    """One request to ``app``; ``headers`` may repeat a name (as `kubectl --as-group a --as-group b` does)."""

    async def exchange(client: httpx.AsyncClient) -> httpx.Response:
        return await client.request(method, path, headers=headers)

    response: httpx.Response = run(app, exchange)
    return response
