"""Counts and times every resource request as kube's endpoint metrics do (k8s.io/apiserver/pkg/endpoints/metrics
MonitorRequest): ``apiserver_request_total`` and ``apiserver_request_duration_seconds`` labelled with the
request's verb (kube's route verb: GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION), dry
run, group, version, resource, subresource, scope and component; and the requests in flight per kind
(``apiserver_current_inflight_requests``), long-running ones left out as kube's max-in-flight filter leaves
them out.

Non-resource requests (discovery, health, /metrics itself) are not counted, as kube instruments only the
routes of its resources; unlike kube, requests refused before the handler (401, 403, 429) are counted too,
under their code."""

from __future__ import annotations

import time
from typing import Final
from urllib.parse import parse_qsl

from apiserver.endpoints.http import Scope
from apiserver.endpoints.replay import Replay
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.pipeline import Exchange
from apiserver.metrics.registry import (
    COMPONENT,
    MUTATING,
    READ_ONLY,
    Metrics,
    Recorder,
    RequestLabels,
)

_ROUTE_VERBS: Final = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_READ_ONLY_VERBS: Final = frozenset(("get", "list", "watch"))
_APPLY_PATCH: Final = b"application/apply-patch+yaml"
_REMEMBERED: Final = 4096


class MetricsFilter:
    """Just inside kube's WithRequestInfo: every request it describes is measured from here; the code is
    the one the exchange's ``send`` saw leave."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._recorders: dict[tuple[RequestInfo, bytes, int], Recorder] = {}
        """What counts and times a request, by its info, query and code (its labels depend on nothing
        else but an apply's content type): a client repeats a few of them."""

    def before(self, exchange: Exchange) -> None:
        info = exchange.info
        assert info is not None
        in_flight = None if exchange.long_running else _kind(info)
        if in_flight is not None:
            self.metrics.in_flight[in_flight] += 1
        exchange.held[self] = (in_flight, time.perf_counter())

    def after(self, exchange: Exchange, error: BaseException | None) -> None:
        in_flight, started = exchange.held[self]
        if in_flight is not None:
            self.metrics.in_flight[in_flight] -= 1
        info = exchange.info
        assert info is not None
        if info.is_resource_request:
            self._recorder(exchange.scope, info, exchange.code)(time.perf_counter() - started)

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """A replay is counted and timed as the request it repeats (it is in flight for no turn of the
        loop, so the in-flight count does not move)."""
        info = exchange.info
        assert info is not None
        if info.is_resource_request:
            recorder = self._recorder(exchange.scope, info, exchange.code)
            replay.record(lambda started: recorder(time.perf_counter() - started))

    def _recorder(self, scope: Scope, info: RequestInfo, code: int) -> Recorder:
        if info.verb == "patch":
            return self.metrics.recorder(_labels(scope, info), code)
        key = (info, scope.get("query_string", b""), code)
        record = self._recorders.get(key)
        if record is None:
            if len(self._recorders) >= _REMEMBERED:
                self._recorders.clear()
            record = self._recorders[key] = self.metrics.recorder(_labels(scope, info), code)
        return record


def _kind(info: RequestInfo) -> str:
    return READ_ONLY if info.verb in _READ_ONLY_VERBS else MUTATING


def _labels(scope: Scope, info: RequestInfo) -> RequestLabels:
    verb = _ROUTE_VERBS.get(info.verb, info.verb.upper())
    if verb == "PATCH" and _content_type(scope) == _APPLY_PATCH:
        verb = "APPLY"  # kube's cleanVerb
    return (
        verb,
        _dry_run(scope.get("query_string", b"")),
        info.api_group,
        info.api_version,
        info.resource,
        info.subresource,
        _scope(info),
        COMPONENT,
    )


def _scope(info: RequestInfo) -> str:
    """kube's CleanScope: a named object or a create is ``resource``, then ``namespace``, ``cluster``."""
    if info.name or info.verb == "create":
        return "resource"
    return "namespace" if info.namespace else "cluster"


def _dry_run(query: bytes) -> str:
    """kube's cleanDryRun: the distinct values, sorted and joined; ``invalid`` for any but ``All``."""
    if b"dryRun" not in query:
        return ""
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    values = sorted({value for key, value in pairs if key == "dryRun"})
    return "invalid" if any(value != "All" for value in values) else ",".join(values)


def _content_type(scope: Scope) -> bytes:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return bytes(value).split(b";", 1)[0].strip().lower()
    return b""
