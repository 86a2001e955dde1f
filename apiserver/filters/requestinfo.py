"""The first filter: what the request addresses (``RequestInfo``) and whether it is long-running, for every
filter after it."""

from __future__ import annotations

from apiserver.endpoints.http import SCOPE_REQUEST_INFO
from apiserver.endpoints.replay import Replay
from apiserver.endpoints.routing import RequestInfo, request_info
from apiserver.filters.longrunning import is_long_running
from apiserver.filters.pipeline import Exchange

_REMEMBERED = 4096
"""Requests whose info is kept: a client asks for the same few paths over and over."""


class RequestInfoFilter:
    """kube's WithRequestInfo. The info depends only on the method, the path and the query, so it is
    parsed once for each of them rather than on every request."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str, bytes], tuple[RequestInfo, bool]] = {}

    def before(self, exchange: Exchange) -> None:
        scope = exchange.scope
        key = (scope["method"], scope["path"], scope.get("query_string", b""))
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= _REMEMBERED:
                self._known.clear()
            info = request_info(*key)
            known = self._known[key] = (info, is_long_running(info))
        exchange.info, exchange.long_running = known
        scope[SCOPE_REQUEST_INFO] = known[0]
        if exchange.replay is not None and known[0].verb != "get":
            # only a GET of one object may be replayed: a list's or a watch's answer is refused here, and
            # the steps after this one see no replay to vouch for
            exchange.replay.refuse()
            exchange.replay = None

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """The info depends on the request line alone, which a replay repeats."""
