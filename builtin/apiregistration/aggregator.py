"""The aggregator (kube-aggregator's APIAggregator, its proxy handlers, AvailableConditionController and
discovery/OpenAPI aggregation) as a controller of the APIService kind: it follows the APIServices and the
Services they name, checks every proxied group-version at once when either changes and every
``CHECK_INTERVAL`` seconds, writes the Available condition, and sits in front of the server's own handlers
(the server's ``aggregation``): requests under a proxied ``/apis/GROUP/VERSION`` go to its backend (kube's
503 "service unavailable" while it is not available, so a backend that is down costs its group only), and
/apis, /apis/GROUP, /openapi/v3 and /openapi/v2 are the local documents merged with the backends'."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
import orjson

from apiserver.encoding.gnostic import CONTENT_TYPE as GNOSTIC_TYPE
from apiserver.encoding.gnostic import encode_swagger
from apiserver.endpoints.discovery import aggregated_version
from apiserver.endpoints.http import ASGIApp, Message, Receive, Scope, Send, respond, respond_text
from apiserver.machinery import errors
from apiserver.storage.interface import StorageError
from builtin.apiregistration import merge
from builtin.apiregistration.availability import LOCAL, Verdict, check, unavailable, with_condition
from builtin.apiregistration.pool import Pool
from builtin.apiregistration.proxy import proxy
from builtin.apiregistration.transport import backend_client, ssl_context
from builtin.core.serviceresolver import Endpoint, Unresolved, resolve, server_name
from builtin.rbac.informer import Informer
from builtin.wants import WantsAggregation, WantsStores

log = logging.getLogger(__name__)
GROUP = "apiregistration.k8s.io"
CHECK_INTERVAL = 5.0
"""Seconds between two checks of every backend (kube-aggregator checks every 30s; a shorter period tells a
client sooner that a backend is back)."""
_EMPTY_BODY: Message = {"type": "http.request", "body": b"", "more_body": False}


class AggregatorServer(WantsStores, WantsAggregation, Protocol):
    """The APIServices' and Services' Stores, and where the aggregator takes its place."""


@dataclass
class _Backend:
    """A proxied group-version: its APIService's spec, connection and last verdict."""

    name: str
    group: str
    version: str
    spec: dict[str, Any]
    client: httpx.AsyncClient | None = None
    """For the checks (off the hot path); requests are proxied over ``pool``."""
    pool: Pool | None = None
    tls_key: bytes = b""
    endpoint: Endpoint | None = None
    verdict: Verdict = field(default_factory=lambda: unavailable("Unknown", "not checked yet"))

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        if self.pool is not None:
            await self.pool.close()

    @property
    def sni(self) -> str:
        return server_name(self.spec.get("service") or {})

    def remote_version(self) -> merge.RemoteVersion:
        return merge.RemoteVersion(
            self.group,
            self.version,
            int(self.spec.get("groupPriorityMinimum") or 0),
            int(self.spec.get("versionPriority") or 0),
            self.verdict.resources,
            self.verdict.available,
        )


class _Followed:
    """An informer handler that keeps one kind's objects by name and wakes the aggregator when a spec
    changes (its own status writes do not)."""

    def __init__(self, aggregator: Aggregator, watch_status: bool) -> None:
        self.aggregator = aggregator
        self.watch_status = watch_status
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}

    def replace(self, objects: list[dict[str, Any]]) -> None:
        self.objects = {_key(obj): obj for obj in objects}
        self.aggregator.wake()

    def changed(self, event_type: str, obj: dict[str, Any]) -> None:
        key = _key(obj)
        previous = self.objects.pop(key, None)
        if event_type != "DELETED":
            self.objects[key] = obj
        if (
            self.watch_status
            or previous is None
            or event_type == "DELETED"
            or previous.get("spec") != obj.get("spec")
        ):
            self.aggregator.wake()


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


class Aggregator:
    """A Controller (start, stop) and the server's Aggregation (claims, serve)."""

    def __init__(self, context: AggregatorServer) -> None:
        self.context = context
        context.aggregation = self
        self.store = context.store(GROUP, "apiservices")
        self.apiservices = _Followed(self, watch_status=False)
        self.services = _Followed(self, watch_status=True)
        self.informers = [
            Informer(self.store, self.apiservices),
            Informer(context.store("", "services"), self.services),
        ]
        self.backends: dict[tuple[str, str], _Backend] = {}
        self.remote_groups: frozenset[str] = frozenset()
        self.generation = 0
        self.merged: dict[tuple[str, str], tuple[bytes, int, bytes]] = {}
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._checks: dict[str, asyncio.Task[None]] = {}

    def wake(self) -> None:
        self._dirty.set()

    async def start(self) -> None:
        for informer in self.informers:
            await informer.start()
        await self.sync()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for check_task in self._checks.values():
            check_task.cancel()
        await asyncio.gather(*self._checks.values(), return_exceptions=True)
        for informer in self.informers:
            await informer.stop()
        for backend in self.backends.values():
            await backend.close()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dirty.wait(), CHECK_INTERVAL)
            self._dirty.clear()
            try:
                await self.sync()
            except (errors.APIError, StorageError) as error:
                log.warning("the APIService checks retry after: %s", error)

    async def sync(self) -> None:
        """Bring the proxy table in line with the APIServices, then check each in a task of its own, so
        that a backend that hangs delays no other's verdict (one still running is checked next round)."""
        objects = {obj["metadata"]["name"]: obj for obj in self.apiservices.objects.values()}
        backends: dict[tuple[str, str], _Backend] = {}
        for obj in objects.values():
            if (obj.get("spec") or {}).get("service") is not None:
                backend = self._backend(obj)
                backends[(backend.group, backend.version)] = backend
        for key, gone in self.backends.items():
            if backends.get(key) is not gone:
                await gone.close()
        if backends.keys() != self.backends.keys():
            self.generation += 1
        self.backends = backends
        self.remote_groups = frozenset(group for group, _ in backends)
        for name in set(self._checks) - set(objects):
            self._checks.pop(name).cancel()
        for name, obj in objects.items():
            task = self._checks.get(name)
            if task is None or task.done():
                self._checks[name] = asyncio.create_task(self._check_and_record(obj))

    async def _check_and_record(self, obj: dict[str, Any]) -> None:
        try:
            verdict = await self._check(obj)
            spec = obj["spec"]
            backend = self.backends.get((spec.get("group", ""), spec.get("version", "")))
            if backend is not None and backend.name == obj["metadata"]["name"]:
                if backend.verdict != verdict:
                    self.generation += 1
                backend.verdict = verdict
            await self._write_condition(obj, verdict)
        except (errors.APIError, StorageError) as error:
            log.warning("the check of APIService %s failed: %s", obj["metadata"]["name"], error)

    def _backend(self, obj: dict[str, Any]) -> _Backend:
        """The backend of ``obj``, its connection kept while its TLS settings stay the same."""
        spec = obj["spec"]
        key = (str(spec.get("group", "")), str(spec.get("version", "")))
        backend = self.backends.get(key)
        name = str(obj["metadata"]["name"])
        if backend is None or backend.name != name:
            backend = _Backend(name, key[0], key[1], spec)
        backend.spec = spec
        return backend

    async def _check(self, obj: dict[str, Any]) -> Verdict:
        spec = obj.get("spec") or {}
        service = spec.get("service")
        if service is None:
            return LOCAL
        backend = self._backend(obj)
        try:
            endpoint = await resolve(self.context, service)
        except Unresolved as error:
            return unavailable(error.reason, error.message)
        tls_key = orjson.dumps(
            [
                spec.get("caBundle"),
                spec.get("insecureSkipTLSVerify"),
                str(self.context.proxy_client_cert),
            ]
        )
        if backend.client is None or backend.tls_key != tls_key or backend.endpoint != endpoint:
            try:
                context = ssl_context(spec, self.context.proxy_client_cert)
            except (ValueError, OSError) as error:
                return unavailable("FailedDiscoveryCheck", str(error))
            await backend.close()
            backend.client, backend.tls_key = backend_client(context), tls_key
            backend.pool = Pool(endpoint.host, endpoint.port, context, backend.sni)
        backend.endpoint = endpoint
        return await check(
            backend.client, endpoint, backend.sni, backend.group, backend.version, backend.verdict
        )

    async def _write_condition(self, obj: dict[str, Any], verdict: Verdict) -> None:
        name = obj["metadata"]["name"]
        now = datetime.datetime.now(datetime.UTC)
        if with_condition(orjson.loads(orjson.dumps(obj)), verdict, now) is None:
            return

        def set_condition(current: dict[str, Any]) -> dict[str, Any]:
            return with_condition(current, verdict, now) or current

        try:
            await self.store.update(None, name, set_condition, subresource="status")
        except errors.APIError as error:
            if error.code not in (404, 409):
                raise

    # the Aggregation seam

    def claims(self, path: str) -> bool:
        if not self.backends:
            return False
        if path.startswith("/apis"):
            parts = path.rstrip("/").split("/")
            if len(parts) == 2:
                return parts[1] == "apis"
            if len(parts) == 3:
                return parts[2] in self.remote_groups
            return (parts[2], parts[3]) in self.backends
        if path.startswith("/openapi/"):
            if path.rstrip("/") in ("/openapi/v2", "/openapi/v3"):
                return True
            parts = path.split("/")
            return len(parts) == 6 and parts[3] == "apis" and (parts[4], parts[5]) in self.backends
        return False

    async def serve(self, scope: Scope, receive: Receive, send: Send, local: ASGIApp) -> None:
        path = scope["path"].rstrip("/")
        parts = path.split("/")
        if scope["method"] != "GET" and len(parts) < 4:
            await local(
                scope, receive, send
            )  # the local answer: kube's 405 for a discovery document
            return
        if path == "/apis":
            await self._group_list(scope, send, local)
        elif path == "/openapi/v3":
            await self._openapi_index(scope, send, local)
        elif path == "/openapi/v2":
            await self._swagger(scope, send, local)
        elif parts[1] == "apis" and len(parts) == 3:
            await self._group(scope, send, local, parts[2])
        else:
            group, version = (parts[4], parts[5]) if parts[1] == "openapi" else (parts[2], parts[3])
            await self._proxy(scope, receive, send, self.backends[(group, version)])

    async def _proxy(self, scope: Scope, receive: Receive, send: Send, backend: _Backend) -> None:
        if not backend.verdict.available or backend.pool is None:
            await respond_text(send, 503, "service unavailable\n")
            return
        if not await proxy(backend.pool, scope, receive, send):
            self.wake()  # check it now: the next requests get the 503 at once if it is down

    def _remotes(self) -> list[merge.RemoteVersion]:
        return [b.remote_version() for b in self.backends.values() if b.verdict.resources]

    async def _group_list(self, scope: Scope, send: Send, local: ASGIApp) -> None:
        accept = _header(scope, b"accept")
        aggregated = aggregated_version(accept)
        status, content_type, body = await _call(local, scope, "/apis", accept)
        if status != 200:
            await respond(send, status, body, content_type)
            return

        def merged() -> bytes:
            document = orjson.loads(body)
            if aggregated is not None:
                return orjson.dumps(merge.merge_aggregated(document, self._remotes()))
            return orjson.dumps(merge.merge_group_list(document, self._remotes()))

        await respond(
            send, 200, self._cached(("/apis", aggregated or ""), body, merged), content_type
        )

    async def _group(self, scope: Scope, send: Send, local: ASGIApp, group: str) -> None:
        status, content_type, body = await _call(local, scope, f"/apis/{group}", "application/json")
        document = orjson.loads(body) if status == 200 else None
        remotes = [r for r in self._remotes() if r.group == group]
        if not remotes and document is None:
            await respond(send, status, body, content_type)
            return
        await respond(send, 200, orjson.dumps(merge.group_document(group, document, remotes)))

    async def _openapi_index(self, scope: Scope, send: Send, local: ASGIApp) -> None:
        status, content_type, body = await _call(local, scope, "/openapi/v3", "application/json")
        if status != 200:
            await respond(send, status, body, content_type)
            return
        remote_paths = {
            f"apis/{b.group}/{b.version}": b.verdict.openapi_v3
            for b in self.backends.values()
            if b.verdict.openapi_v3
        }

        def merged() -> bytes:
            return orjson.dumps(merge.merge_openapi_index(orjson.loads(body), remote_paths))

        await respond(
            send,
            200,
            self._cached(("/openapi/v3", ""), body, merged),
            headers=[(b"cache-control", b"no-cache, private")],
        )

    async def _swagger(self, scope: Scope, send: Send, local: ASGIApp) -> None:
        status, content_type, body = await _call(local, scope, "/openapi/v2", "application/json")
        if status != 200:
            await respond(send, status, body, content_type)
            return
        remotes = [
            (f"/apis/{b.group}/{b.version}", b.verdict.openapi_v2)
            for b in self.backends.values()
            if b.verdict.openapi_v2
        ]
        protobuf = "protobuf" in _header(scope, b"accept")

        def merged() -> bytes:
            document = merge.merge_swagger(orjson.loads(body), remotes)
            return encode_swagger(document) if protobuf else orjson.dumps(document)

        served = self._cached(("/openapi/v2", "protobuf" if protobuf else ""), body, merged)
        etag = f'"{hashlib.sha512(served).hexdigest()[:128].upper()}"'.encode()
        await respond(
            send,
            200,
            served,
            GNOSTIC_TYPE.encode() if protobuf else b"application/json",
            headers=[(b"etag", etag)],
        )

    def _cached(self, key: tuple[str, str], local: bytes, build: Any) -> bytes:
        """A merged document, built again only when the local one or the backends' changed."""
        cached = self.merged.get(key)
        if cached is not None and cached[0] == local and cached[1] == self.generation:
            return cached[2]
        body: bytes = build()
        self.merged[key] = (local, self.generation, body)
        return body


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return ""


async def _call(local: ASGIApp, scope: Scope, path: str, accept: str) -> tuple[int, bytes, bytes]:
    """GET ``path`` from the server's own handlers: its status, content type and body."""
    request = {
        **scope,
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"accept", accept.encode())],
    }
    status, content_type, parts = 500, b"", []

    async def receive() -> Message:
        return _EMPTY_BODY

    async def send(message: Message) -> None:
        nonlocal status, content_type
        if message["type"] == "http.response.start":
            status = message["status"]
            content_type = next(
                (v for k, v in message.get("headers", ()) if k == b"content-type"), b""
            )
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    await local(request, receive, send)
    return status, content_type, b"".join(parts)
