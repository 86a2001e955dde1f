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

from apiserver.endpoints.http import (
    SCOPE_REQUEST_INFO,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    transport_of,
)
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.longrunning import is_long_running
from apiserver.metrics.registry import COMPONENT, MUTATING, READ_ONLY, Metrics, RequestLabels

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


class MetricsFilter:
    """Just inside kube's WithRequestInfo: every request it describes is measured from here."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        info: RequestInfo = scope[SCOPE_REQUEST_INFO]
        in_flight = None if is_long_running(info) else _kind(info)
        if in_flight is not None:
            self.metrics.in_flight[in_flight] += 1
        if not info.is_resource_request:
            try:
                await self.app(scope, receive, send)
            finally:
                if in_flight is not None:
                    self.metrics.in_flight[in_flight] -= 1
            return
        started = time.perf_counter()
        response = _Response(send)
        try:
            await self.app(scope, receive, response.send)
        finally:
            if in_flight is not None:
                self.metrics.in_flight[in_flight] -= 1
            self.metrics.request(_labels(scope, info), response.code, time.perf_counter() - started)


class _Response:
    """Sees the response's code on its way out. ``send`` is a bound method of an object carrying the
    server's ``transport``, as the watch writer needs to find it (http.transport_of)."""

    __slots__ = ("code", "send_to", "transport")

    def __init__(self, send: Send) -> None:
        self.send_to = send
        self.transport = transport_of(send)
        self.code = 500
        """What the client sees of a handler that raised before answering."""

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.code = message["status"]
        await self.send_to(message)


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
