"""The first filter: what the request addresses (``RequestInfo``), for every filter after it."""

from __future__ import annotations

from apiserver.endpoints.http import SCOPE_REQUEST_INFO
from apiserver.endpoints.routing import request_info
from apiserver.filters.pipeline import Exchange


class RequestInfoFilter:
    """kube's WithRequestInfo."""

    def before(self, exchange: Exchange) -> None:
        scope = exchange.scope
        info = request_info(scope["method"], scope["path"], scope.get("query_string", b""))
        exchange.info = scope[SCOPE_REQUEST_INFO] = info
