"""The ASGI application: health and version, discovery, OpenAPI, and resource requests, in kube's path layout.

Every failure leaves as a ``metav1.Status``; an unexpected exception becomes a 500 InternalError Status (and is
logged) rather than a dropped connection.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path

import orjson

from apiserver.admission.chain import AdmissionChain
from apiserver.authentication.jwtkeys import JWKS_PATH, OPENID_CONFIGURATION_PATH
from apiserver.authentication.token import TokenAuthentication
from apiserver.authorization.authorizer import AlwaysAllow, Authorizer
from apiserver.authorization.union import WEBHOOK_MODE, authorizer_for_modes
from apiserver.endpoints.aggregation import Aggregation
from apiserver.endpoints.discovery import AGGREGATED_TYPES, Discovery, aggregated_version
from apiserver.endpoints.handlers.create import BoundCreater
from apiserver.endpoints.http import (
    Receive,
    Request,
    Scope,
    Send,
    respond,
    respond_error,
    respond_text,
)
from apiserver.endpoints.openapi import OpenAPIDocuments
from apiserver.endpoints.openid import serve_openid
from apiserver.endpoints.replay import SCOPE_REPLAY, Replay
from apiserver.endpoints.resource import Resolved, ResourceHandler
from apiserver.endpoints.routing import ResourcePath, parse_resource_path
from apiserver.fieldmanager.gotyped import stored_go_type
from apiserver.machinery import errors
from apiserver.machinery.scheme import Scheme, ServerConverter
from apiserver.metrics.registry import Metrics
from apiserver.metrics.storage import InstrumentedStorage
from apiserver.registry.cacher import WatchCache
from apiserver.registry.keys import key_prefix
from apiserver.registry.rest import DEFAULT_OPTIONS, RESTOptions
from apiserver.registry.store import Store
from apiserver.schema.kubefinalizers import KubeFinalizerGroups, kube_finalizer_causes
from apiserver.server.apis import NO_PARTS, APIs, ServerParts
from apiserver.server.compactor import Compactor
from apiserver.server.config import ServerConfig
from apiserver.server.controllers import Controller, LeaderElection, leader_only
from apiserver.server.health import Check, Health
from apiserver.server.index import index_body
from apiserver.server.served import ServedResources
from apiserver.storage.interface import (
    Storage,
    StorageTimeoutError,
    StorageUnavailableError,
    ValueTooLargeError,
)

log = logging.getLogger(__name__)

_REMEMBERED_PATHS = 4096
"""Resource paths whose resolution is kept: clients address the same few collections and objects."""
_LONGEST_REMEMBERED_PATH = 1024
"""Longer than any valid object's path (a name is at most 253 characters): not kept, so that long paths
cannot make the kept ones take much memory."""

PROMETHEUS_TEXT = b"text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text format's type, as kube's /metrics (Go's expfmt) answers it."""

KUBERNETES_VERSION = ("1", "32")
VERSION_INFO = {
    "major": KUBERNETES_VERSION[0],
    "minor": KUBERNETES_VERSION[1],
    "gitVersion": f"v{KUBERNETES_VERSION[0]}.{KUBERNETES_VERSION[1]}.0+apiforge",
    "gitCommit": "apiforge",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "python3.11",
    "compiler": "cpython",
    "platform": "linux/amd64",
}


class APIServer:
    """The whole server as one ASGI callable, over one Storage. Served behind the filter chain
    (server/chain.py), which authorizes every request with the context's authorizer, the one the access
    reviews answer from: ``authorizer``, or, given ``authorization_modes``, their chain (union.py)."""

    def __init__(
        self,
        apis: APIs,
        storage: Storage,
        openapi_dir: Path,
        compaction_interval: float = 300.0,
        authorizer: Authorizer | None = None,
        tokens: TokenAuthentication | None = None,
        authorization_modes: Sequence[str] = (),
        leader_election: LeaderElection | None = None,
        delegated_authorizer: Authorizer | None = None,
        kind_options: Mapping[type, object] | None = None,
        secure_port: int = 6443,
    ) -> None:
        scheme = apis.scheme
        self.scheme = scheme
        self.rest: dict[tuple[str, str], RESTOptions] = dict(apis.rest)
        """Each resource's storage wiring, where it has one (CRDs installed while serving have none)."""
        self.metrics = Metrics(self._object_counts)
        # every storage request is timed, the health check's excepted (kube's is not a store request)
        self.health = Health(storage)
        storage = InstrumentedStorage(storage, self.metrics, self._key_prefixes)
        self.storage: Storage = storage
        self.compactor = Compactor(storage, compaction_interval)
        # every kind's parts are built from what its definition names, with this one shared context
        self.context = ServerConfig(
            storage,
            authorizer or AlwaysAllow(),
            leader_election=leader_election,
            kind_options=kind_options or {},
            secure_port=secure_port,
        )
        if tokens is not None:
            self.context.tokens = tokens
        self.stores: dict[tuple[str, str], Store] = self.context.stores
        self._converters = self._bind_converters(scheme)
        self.admission = AdmissionChain()
        core_validated = self.context.kind_option(
            KubeFinalizerGroups, KubeFinalizerGroups(frozenset())
        )
        for resource in scheme:
            key = (resource.group, resource.plural)
            strategy = self.rest.get(key, DEFAULT_OPTIONS).new_strategy(self.context)
            go_type = stored_go_type(resource, scheme.resource)
            kube_validated = resource.builtin and resource.group in core_validated.groups
            self.stores[key] = Store(
                resource,
                storage,
                strategy,
                admission=self.admission,
                go_type=go_type,
                metadata_rule=kube_finalizer_causes if kube_validated else None,
            )
        parts = [apis.parts.get((r.group, r.plural), NO_PARTS) for r in scheme]
        for part in parts:
            for plugin in part.admission:
                self.admission.add(plugin(self.context))
        self.controllers = self._controllers(parts)
        self._caches_started = False
        self.health.add(Check("informer-sync", self._informers_synced), "readyz")
        self._started_hooks = [self.health.post_start_hook("generic-apiserver-start-informers")]
        self._controller_hooks = [
            self.health.post_start_hook(name) if name else None
            for name in (getattr(c, "post_start_hook", "") for c in self.controllers)
        ]
        self.health.add_shutdown_check()
        self.context.tokens.authenticators.extend(
            authenticator(self.context) for part in parts for authenticator in part.authenticators
        )
        if (
            delegated_authorizer is not None
        ):  # an extension server: asked after --authorization-mode's
            self.context.authorizer_modes[WEBHOOK_MODE] = delegated_authorizer
            authorization_modes = (*authorization_modes, WEBHOOK_MODE)
        if authorization_modes:  # composed once every part has provided its modes
            self.context.authorizer = authorizer_for_modes(
                authorization_modes, self.context.authorizer_modes
            )
        self.discovery = Discovery(scheme, self.rest)
        self.openapi = OpenAPIDocuments(openapi_dir)
        self.served = ServedResources(
            scheme, self.context, self.admission, self.compactor, self.openapi, self.rest
        )
        self.served.listeners.append(self._rediscover)
        self._resolved: dict[str, tuple[int, Resolved]] = {}
        """Resource paths as resolved at a served revision (``_resolve``)."""
        self.served_revision = 0
        """Counts the changes to what is served (a CRD added, changed, removed): a replayed answer
        (endpoints/replay.py) holds while the revision it was served at is current."""
        self.served.listeners.append(self._served_changed)
        self.context.served = self.served
        self.resources = ResourceHandler(
            scheme, self.stores, self._creaters(scheme), metrics=self.metrics, rest=self.rest
        )
        self.version_body = orjson.dumps(VERSION_INFO)

    def _object_counts(self) -> list[tuple[str, int]]:
        """apiserver_storage_objects: every stored resource's count, from its watch cache (kube counts in
        etcd once a minute; the cache holds every object already). Read from the stores when scraped, so
        resources added at run time are counted too."""
        return [
            (store.resource.group_resource, len(store.cache.objects))
            for store in list(self.stores.values())
            if store.cache is not None
        ]

    def stored_count(self, group: str, resource: str) -> int:
        """How many objects of a resource its watch cache holds (0 for one not stored): the work a LIST
        of it does, as priority and fairness estimates it."""
        store = self.stores.get((group, resource))
        return len(store.cache.objects) if store is not None and store.cache is not None else 0

    def _key_prefixes(self) -> dict[str, str]:
        """Each stored resource's key prefix and its name as kube's storage metrics label it."""
        return {
            key_prefix(store.resource): store.resource.group_resource
            for store in list(self.stores.values())
            if store.resource.persisted
        }

    def _rediscover(self) -> None:
        """Discovery after the served resources changed (its documents are pre-encoded)."""
        self.discovery = Discovery(self.scheme, self.rest)

    def _bind_converters(self, scheme: Scheme) -> list[ServerConverter]:
        """Each generated kind's conversion webhook client, made with this server's context and set as
        its resource's converter before any store is built."""
        bound = []
        for resource in list(scheme):
            make = self.rest.get((resource.group, resource.plural), DEFAULT_OPTIONS).converter
            if make is not None:
                converter = make(self.context)
                scheme.replace(dataclasses.replace(resource, converter=converter))
                bound.append(converter)
        return bound

    def _controllers(self, parts: list[ServerParts]) -> list[Controller]:
        """The controllers this replica starts: every one when it is the only replica (or nothing
        elects); otherwise the leader-only ones (the compactor's among them) go to the elector, which runs
        them while this replica leads."""
        built: list[Controller] = [
            controller(self.context) for part in parts for controller in part.controllers
        ]
        everywhere = [c for c in built if not leader_only(c)]
        leading = [c for c in [*built, self.compactor] if leader_only(c)]
        elector = self.context.elector
        if elector is None or self.context.leader_election is None:
            return [*everywhere, *leading]
        for controller in leading:
            elector.add(controller)
        return everywhere

    def _creaters(self, scheme: Scheme) -> dict[tuple[str, str, str], BoundCreater]:
        """Every create subresource's handler, built with the context, and its body's kind."""
        creaters = {}
        for resource in scheme:
            options = self.rest.get((resource.group, resource.plural), DEFAULT_OPTIONS)
            for sub in options.create_subresources:
                body = scheme.kind(sub.group, sub.kind)
                version = body.version(sub.version) if body is not None else None
                if body is None or version is None:  # the generator checks this; a hand-made scheme
                    raise ValueError(
                        f"{resource.plural}/{sub.name}: no kind {sub.kind} {sub.version}"
                    )
                creaters[(resource.group, resource.plural, sub.name)] = BoundCreater(
                    body, version, sub.handler(self.context)
                )
        return creaters

    async def start(self) -> None:
        await self.storage.start()
        for store in self.stores.values():
            if store.resource.persisted:
                store.cache = WatchCache(self.storage, key_prefix(store.resource))
                await store.cache.start()
                self.compactor.listeners.append(store.cache.forget_before)
        self._caches_started = True
        for started in self._started_hooks:
            started()
        for controller, hook in zip(self.controllers, self._controller_hooks, strict=True):
            await controller.start()
            if hook is not None:
                hook()

    async def _informers_synced(self) -> None:
        """kube's informer-sync: the watch caches of the resources served from the start have listed.
        (A resource added at run time, a CRD, is not waited for, as kube's informer-sync does not wait
        for CRD watch caches: it serves from storage until its cache is up.)"""
        if self._caches_started:
            return
        waiting = sorted(
            store.resource.group_resource
            for store in list(self.stores.values())
            if store.resource.persisted and store.cache is None
        )
        if waiting:
            raise RuntimeError(f"{len(waiting)} informers not started yet: {waiting}")

    def shutdown_initiated(self) -> None:
        """kube's ShutdownInitiated: readiness fails from now on, while requests are still served."""
        self.health.shutting_down = True
        if self.context.elector is not None:
            self.context.elector.retire()

    async def stop(self) -> None:
        self.shutdown_initiated()
        for controller in reversed(self.controllers):
            await controller.stop()
        for store in self.stores.values():
            if store.cache is not None:
                await store.cache.stop()
        for converter in self._converters:
            await converter.close()
        await self.storage.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] == "http":
            await self.serve_http(scope, receive, send)

    def _served_changed(self) -> None:
        self.served_revision += 1

    def serve_http(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """An HTTP request, served here or by the aggregated server that claims its path (a plain call
        handing back the serving coroutine: the filter chain awaits it, one coroutine fewer)."""
        aggregation = self.context.aggregation
        replay = scope.get(SCOPE_REPLAY)
        if replay is not None:
            self._replay_depends(replay, scope["path"], aggregation)
        if aggregation is not None and aggregation.claims(scope["path"]):
            return aggregation.serve(scope, receive, send, self.serve_local)
        return self.serve_local(scope, receive, send)

    def _replay_depends(self, replay: Replay, path: str, aggregation: Aggregation | None) -> None:
        """A replayed answer holds while the same resources are served here and no aggregated server
        claims its path."""
        served_at = self.served_revision
        replay.check(lambda: self.served_revision == served_at)
        if aggregation is not None:
            replay.check(lambda: not aggregation.claims(path))

    async def serve_local(self, scope: Scope, receive: Receive, send: Send) -> None:
        """An HTTP request served by this server itself (what an aggregator delegates)."""
        path = scope["path"]
        # no health endpoint is under /api or /apis: the resource requests skip the endpoint's split
        if not path.startswith("/api") and self.health.handles(path):
            await self.health.serve(scope, send)
            return
        request = Request.from_scope(scope, receive)
        try:
            await self._route(request, send)
        except errors.APIError as error:
            await respond_error(send, error, request.warnings, request.headers.get("accept", ""))
        except (
            StorageTimeoutError
        ) as error:  # it may still be applied: kube's 504, not "unavailable"
            log.warning("%s %s: %s", request.method, request.path, error)
            await respond_error(send, errors.request_timeout())
        except StorageUnavailableError as error:
            await respond_error(
                send, errors.service_unavailable(f"storage is unavailable: {error}")
            )
        except ValueTooLargeError as error:
            await respond_error(send, errors.request_entity_too_large(str(error)))
        except Exception as error:  # a bug, never the client's fault: log it, answer a Status
            log.exception("internal error serving %s %s", request.method, request.path)
            await respond_error(send, errors.internal_error(type(error).__name__))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as error:
                    log.exception("start-up failed")
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _route(self, request: Request, send: Send) -> Awaitable[None]:
        """The request's handler, called: a plain call handing back what to await (one coroutine fewer
        on every request); ``serve_local`` awaits it where its errors are answered."""
        path = request.path.rstrip("/") or "/"
        if request.path == "/":
            if request.method not in ("GET", "HEAD"):
                raise errors.method_not_allowed()
            return respond(send, 200, self._index())
        if path == "/version":
            return respond(send, 200, self.version_body)
        if path == "/metrics":
            if request.method not in ("GET", "HEAD"):
                raise errors.method_not_allowed()
            return respond(send, 200, self.metrics.exposition(), PROMETHEUS_TEXT)
        keys = self.context.tokens.keys
        if keys is not None and path in (OPENID_CONFIGURATION_PATH, JWKS_PATH):
            return serve_openid(request, send, keys, path)
        if path.startswith("/openapi/"):
            return self._openapi(request, send, path)
        if path == "/api" or path == "/apis" or path.startswith(("/api/", "/apis/")):
            known = self._resolved.get(path)
            if known is not None and known[0] == self.served_revision:
                return self.resources.handle(request, send, known[1])
            document = self.discovery.document(path)
            if document is not None:
                if request.method != "GET":
                    raise errors.method_not_allowed()
                aggregated = aggregated_version(request.headers.get("accept", ""))
                if aggregated is not None and path in ("/api", "/apis"):
                    body = self.discovery.aggregated_document(path, aggregated)
                    assert body is not None
                    return respond(send, 200, body, AGGREGATED_TYPES[aggregated])
                return respond(send, 200, document)
            resource_path = parse_resource_path(path)
            if resource_path is None:
                raise errors.resource_not_found()
            if self._unhandled(resource_path):
                return respond_text(send, 404, "404 page not found\n")
            return self.resources.handle(request, send, self._resolve(path, resource_path))
        return respond_text(send, 404, "404 page not found\n")

    def _resolve(self, path: str, resource_path: ResourcePath) -> Resolved:
        """What the resource handler serves at ``path``, kept while the served resources stay the same
        (``served_revision``): no discovery document, path split or scheme lookup on the next request."""
        revision = self.served_revision
        resolved = self.resources.resolve(resource_path)
        if len(path) <= _LONGEST_REMEMBERED_PATH:
            if len(self._resolved) >= _REMEMBERED_PATHS:
                self._resolved.clear()
            self._resolved[path] = (revision, resolved)
        return resolved

    def _unhandled(self, path: ResourcePath) -> bool:
        """No handler of kube's would take the request, so its NotFound handler answers in plain text: no
        resource that is not a CustomResourceDefinition's serves the group-version (a built-in group-version's
        handler answers JSON), and no CRD serves the resource in that version (apiextensions-apiserver's
        crdHandler hands such a request to its delegate: pkg/apiserver/customresource_handler.go)."""
        if self.scheme.served(path.group, path.version, path.plural) is not None:
            return False
        for resource in self.scheme:
            version = resource.version(path.version)
            if (
                resource.group == path.group
                and version is not None
                and version.served
                and (resource.group, resource.plural) not in self.served.installed
            ):
                return False
        return True

    def _index(self) -> bytes:
        health = {
            endpoint: [check.name for check in checks]
            for endpoint, checks in self.health.checks.items()
        }
        issuer = (
            (OPENID_CONFIGURATION_PATH, JWKS_PATH) if self.context.tokens.keys is not None else ()
        )
        return index_body(self.discovery.documents, health, issuer)

    async def _openapi(self, request: Request, send: Send, path: str) -> None:
        if path == "/openapi/v2":
            served = self.openapi.v2(request.headers.get("accept", ""))
            if served is None:
                await respond_text(send, 404, "404 page not found\n")
                return
            v2_document, content_type = served
            etag = f'"{v2_document.hash}"'.encode()
            await respond(send, 200, v2_document.body, content_type, headers=[(b"etag", etag)])
            return
        if path == "/openapi/v3":
            await respond(
                send, 200, self.openapi.index, headers=[(b"cache-control", b"no-cache, private")]
            )
            return
        document = (
            self.openapi.document(path.removeprefix("/openapi/v3/"))
            if path.startswith("/openapi/v3/")
            else None
        )
        if document is None:
            await respond_text(send, 404, "404 page not found\n")
            return
        asked = request.query.get("hash")
        if asked and asked != document.hash:
            # kube-openapi's handler3: a hash that is not the document's current one is redirected to the
            # current hashed URL (301, as Go's http.Redirect writes it), never served under a stale hash
            location = f"{path}?hash={document.hash}"
            await respond(
                send,
                301,
                f'<a href="{location}">Moved Permanently</a>.\n\n'.encode(),
                b"text/html; charset=utf-8",
                headers=[(b"location", location.encode())],
            )
            return
        etag = f'"{document.hash}"'.encode()
        if request.headers.get("if-none-match", "").encode() == etag:
            await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", etag)]})
            await send({"type": "http.response.body", "body": b""})
            return
        cache = b"public, immutable" if asked else b"no-cache, private"
        headers: list[tuple[bytes, bytes]] = [(b"etag", etag), (b"cache-control", cache)]
        await respond(send, 200, document.body, headers=headers)
