"""The first filter: what the request addresses (``RequestInfo``), for every filter after it."""

from __future__ import annotations

from apiserver.endpoints.http import SCOPE_REQUEST_INFO, ASGIApp, Receive, Scope, Send
from apiserver.endpoints.routing import request_info


class RequestInfoFilter:
    """kube's WithRequestInfo."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[SCOPE_REQUEST_INFO] = request_info(
            scope["method"], scope["path"], scope.get("query_string", b"")
        )
        await self.app(scope, receive, send)
