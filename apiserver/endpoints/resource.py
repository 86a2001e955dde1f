"""The REST verbs of every resource: get, list, watch, create, update, patch, delete, deletecollection, and the
status and scale subresources. Generic: all per-kind behaviour comes from the Scheme's ResourceType."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Attributes, Operation
from apiserver.encoding import protobuf
from apiserver.encoding.limits import load_json
from apiserver.encoding.protobuf_meta import DELETE_OPTIONS
from apiserver.endpoints.decode import (
    Target,
    check_type_meta,
    field_validation,
    parse_body,
)
from apiserver.endpoints.fields import apply_manager, server_side_apply, tracker
from apiserver.endpoints.http import Request, Send, respond, respond_json, respond_parts
from apiserver.endpoints.output import (
    Negotiated,
    Output,
    acceptable,
    list_body,
    negotiate,
    object_body,
    prefers_protobuf,
    status_body,
    untyped_items,
)
from apiserver.endpoints.resourceversion import EXACT, validate_list_options, wait_until_fresh
from apiserver.endpoints.routes import check_routed, subresource_verb
from apiserver.endpoints.routing import ResourcePath
from apiserver.endpoints.scale import apply_scale, scale_of
from apiserver.endpoints.watch import serve_watch
from apiserver.machinery import errors
from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, Scheme, VersionType
from apiserver.machinery.selectors import matcher, parse_field_selector, parse_label_selector
from apiserver.metrics.registry import Metrics
from apiserver.patch.jsonpatch import PatchError, apply_json_patch, apply_merge_patch
from apiserver.patch.strategic import apply_strategic_merge_patch
from apiserver.registry.admit import Track, Write, WriteOptions, admit, go_quoted
from apiserver.registry.deletion import Propagation
from apiserver.registry.identity import check_name, check_namespace
from apiserver.registry.offload import is_heavy, run_heavy
from apiserver.registry.store import ListOptions, Store, parse_resource_version
from apiserver.registry.subresource import NamedCreater
from apiserver.registry.versioning import converted, to_version

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
INCLUDE_OBJECT = frozenset(("", "None", "Metadata", "Object"))
"""The includeObject values of a Table request (metav1.IncludeObjectPolicy)."""
APPLY_ATTEMPTS = 5
"""Tries of a server-side apply whose object another writer creates or deletes in between: each lost
race means someone else's write landed, so a few tries are ample (the last error is answered)."""


@dataclass(frozen=True, slots=True)
class BoundCreater:
    """A create subresource as served: its body's resource and version, and the handler that answers."""

    body: ResourceType
    version: VersionType
    handler: NamedCreater


class ResourceHandler:
    """Answers every request under a resource path."""

    def __init__(
        self,
        scheme: Scheme,
        stores: dict[tuple[str, str], Store],
        creaters: Mapping[tuple[str, str, str], BoundCreater] | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.scheme = scheme
        self.stores = stores
        self.creaters = creaters or {}
        """The create subresources by (group, plural, subresource)."""
        self.metrics = metrics if metrics is not None else Metrics()

    async def handle(self, request: Request, send: Send, path: ResourcePath) -> None:
        served = self.scheme.served(path.group, path.version, path.plural)
        if served is None:
            raise errors.resource_not_found()
        resource, version = served
        if path.namespace is not None and not resource.namespaced:
            raise errors.resource_not_found()
        namespace = path.namespace if resource.namespaced else None
        if path.subresource:
            subresource_verb(resource, version, path.subresource, request.method)
        else:
            check_routed(resource, bool(path.name), request.method, request.flag("watch"))
        store = self.stores[(resource.group, resource.plural)]
        target = Target(resource, version, namespace, path.name)
        _check_acceptable(request, target)
        if version.deprecated:
            request.warnings.append(
                version.deprecation_warning
                or f"{resource.api_version(version.name)} {resource.kind} is deprecated"
            )
        method = request.method
        if path.subresource:
            await self._subresource(request, send, store, target, path.subresource)
        elif not path.name:
            if method == "GET":
                if request.flag("watch"):
                    await self._watch(request, send, store, target)
                else:
                    await self._list(request, send, store, target)
            elif method == "POST":
                await self._create(request, send, store, target)
            elif method == "DELETE":
                # kube serves deletecollection only where create is: on the namespaced path of a
                # namespaced kind, and not behind a trailing slash (both 405 there)
                if (resource.namespaced and namespace is None) or request.path.endswith("/"):
                    raise errors.method_not_allowed()
                await self._delete_collection(request, send, store, target)
            else:
                raise errors.method_not_allowed()
        elif method == "GET":
            await _wait_until_fresh(request, store)
            obj, raw = await store.get_rendered(namespace, path.name)
            if (
                raw is not None
                and target.resource.wire_is_internal(target.version)
                and _plain_json(request, target)
            ):
                await respond(send, 200, raw, warnings=request.warnings)
            else:
                await self._send_object(request, send, 200, obj, target)
        elif method == "PUT":
            await self._update(request, send, store, target)
        elif method == "PATCH":
            await self._patch(request, send, store, target, "")
        elif method == "DELETE":
            await self._delete(request, send, store, target)
        else:
            raise errors.method_not_allowed()

    # -- output ------------------------------------------------------------------------------------

    async def _send_object(
        self, request: Request, send: Send, status: int, obj: Object, target: Target
    ) -> None:
        (obj,) = await converted([obj], target.resource, target.version)
        versioned = to_version(obj, target.resource, target.version)
        negotiated = _negotiated(request, target)
        include_object = request.query.get("includeObject", "")
        if negotiated.yaml:  # ~0.8 ms per KiB on the loop: every YAML answer is rendered off it
            content_type, body = await run_heavy(
                object_body, versioned, negotiated, target, include_object
            )
        else:
            content_type, body = object_body(versioned, negotiated, target, include_object)
        await respond(send, status, body, content_type, warnings=request.warnings)

    # -- reads -------------------------------------------------------------------------------------

    def _list_options(self, request: Request, target: Target, store: Store) -> ListOptions:
        labels = parse_label_selector(request.query.get("labelSelector", ""))
        selectable = ["metadata.name", "metadata.namespace"]
        selectable += [f.lstrip(".") for f in target.version.selectable_fields]
        fields = parse_field_selector(
            request.query.get("fieldSelector", ""),
            selectable,
            builtin=target.resource.builtin,
            labels=store.strategy.field_labels,
        )
        try:
            limit = int(request.query.get("limit") or 0)
            if not -(2**63) <= limit < 2**63:  # kube reads it as an int64
                raise ValueError(limit)
        except ValueError:
            raise errors.bad_request(f"invalid limit: {request.query['limit']!r}") from None
        revision = 0
        if request.query.get("resourceVersionMatch") == "Exact":
            revision = parse_resource_version(request.query.get("resourceVersion", ""))
        any_version = request.query.get("resourceVersion") == "0"
        return ListOptions(
            matcher(labels, fields),
            max(limit, 0),
            request.query.get("continue", ""),
            revision,
            any_version,
        )

    async def _list(self, request: Request, send: Send, store: Store, target: Target) -> None:
        validate_list_options(request.query)
        options = self._list_options(request, target, store)
        await _wait_until_fresh(request, store)
        page = await store.list(target.namespace, options)
        metadata: Object = {"resourceVersion": str(page.revision)}
        if page.continue_token:
            metadata["continue"] = page.continue_token
            if page.remaining:
                metadata["remainingItemCount"] = page.remaining
        negotiated = _negotiated(request, target)
        if (
            page.encoded is not None
            and _is_json_object(negotiated)
            and target.resource.wire_is_internal(target.version)
        ):
            # the storage version's items are the cached JSON as is: joined once, not re-encoded, and sent
            # between head and tail without copying the whole body again (§ LIST cost)
            head = orjson.dumps(
                {
                    "apiVersion": target.api_version,
                    "kind": target.resource.list_kind,
                    "metadata": metadata,
                }
            )
            encoded = page.encoded
            if target.resource.builtin:
                encoded = untyped_items(encoded, target.api_version, target.resource.kind)
            parts = (head[:-1] + b',"items":[', b",".join(encoded), b"]}")
            await respond_parts(send, 200, parts, warnings=request.warnings)
            return
        # one conversion review per page, as kube's webhook converter takes a whole list
        page_items = await converted(page.items, target.resource, target.version)
        items = [to_version(obj, target.resource, target.version) for obj in page_items]
        include_object = request.query.get("includeObject", "")
        if negotiated.yaml:  # rendered off the loop, as one object is
            content_type, body = await run_heavy(
                list_body, items, negotiated, target, include_object, metadata
            )
        else:
            content_type, body = list_body(items, negotiated, target, include_object, metadata)
        await respond(send, 200, body, content_type, warnings=request.warnings)

    async def _watch(self, request: Request, send: Send, store: Store, target: Target) -> None:
        options = self._list_options(request, target, store)
        negotiated = _negotiated(request, target)
        if negotiated.yaml:  # kube streams only what has a stream serializer, which YAML has not
            codec = [protobuf.CONTENT_TYPE] if target.version.protobuf is not None else []
            raise errors.not_acceptable(["application/json", *codec])
        kind = (target.resource.group, target.version.name, target.resource.kind)
        with self.metrics.watcher(kind) as sent:
            await serve_watch(request, send, store, target, options.predicate, negotiated, sent)

    # -- writes ------------------------------------------------------------------------------------

    async def _read_object(self, request: Request, target: Target) -> Object:
        return (await self._read_body(request, target)).parsed

    async def _read_body(self, request: Request, target: Target) -> _Body:
        raw = await request.body()
        if is_heavy(len(raw)):
            return await run_heavy(_Body, raw, request.content_type, target)
        return _Body(raw, request.content_type, target)

    async def _create(self, request: Request, send: Send, store: Store, target: Target) -> None:
        if target.resource.namespaced and target.namespace is None:
            raise errors.method_not_allowed()
        if store.terminating:
            raise errors.terminating_create(target.resource.group, target.resource.plural)
        mode = field_validation(request.query)
        obj = await self._read_object(request, target)
        request.audit_request_object(obj["metadata"])
        check_namespace(obj["metadata"], target.namespace)
        options = _options(request, mode, lambda old: tracker(request, target, old))
        created = await store.create(
            target.namespace,
            obj,
            dry_run=_dry_run(request),
            version=target.version,
            options=options,
        )
        await self._send_object(request, send, 201, created, target)

    async def _update(self, request: Request, send: Send, store: Store, target: Target) -> None:
        mode = field_validation(request.query)
        body = await self._read_body(request, target)
        await self._replace(request, send, store, target, body, mode, "")

    async def _replace(
        self,
        request: Request,
        send: Send,
        store: Store,
        target: Target,
        body: _Body,
        mode: str,
        subresource: str,
    ) -> None:
        """A PUT: the body replaces the current object (of which it shares nothing: it is a parse of its
        own, so ownership is recorded against the stored object without copying it). As kube's update
        handler: the body's namespace, then its name are the URL's, and its uid, if any, the stored
        object's."""
        metadata = body.parsed["metadata"]
        check_name(metadata, target.name, target.namespace)
        options = _options(
            request, mode, lambda old: tracker(request, target, old, subresource, shared=False)
        )
        updated = await store.update(
            target.namespace,
            target.name,
            lambda _current: body.take(),
            subresource=subresource,
            dry_run=_dry_run(request),
            version=target.version,
            options=options,
            uid_precondition=str(metadata.get("uid") or ""),
        )
        await self._send_object(request, send, 200, updated, target)

    async def _patch(
        self, request: Request, send: Send, store: Store, target: Target, subresource: str
    ) -> None:
        mode = field_validation(request.query)
        if request.content_type == APPLY_PATCH:
            await self._apply(request, send, store, target, subresource, mode)
            return
        patcher = _patcher(request.content_type, target.version)
        raw = await request.body()
        try:
            patch = await run_heavy(load_json, raw) if is_heavy(len(raw)) else load_json(raw)
        except orjson.JSONDecodeError as error:
            raise errors.bad_request(f"error decoding patch: {error}") from None

        def try_update(current: Object) -> Object:
            try:
                patched = patcher(current, patch)
            except PatchError as error:
                raise patch_failure(error) from None
            patched = check_type_meta(patched, target)
            # kube's patcher.applyPatch: the patched object is still the URL's
            check_name(patched["metadata"], target.name, target.namespace)
            return patched

        # the patched object shares what the patch left alone with the stored one: tracked on a copy
        options = _options(request, mode, lambda old: tracker(request, target, old, subresource))
        updated = await store.update(
            target.namespace,
            target.name,
            try_update,
            subresource=subresource,
            dry_run=_dry_run(request),
            version=target.version,
            options=options,
        )
        await self._send_object(request, send, 200, updated, target)

    async def _apply(
        self,
        request: Request,
        send: Send,
        store: Store,
        target: Target,
        subresource: str,
        mode: str,
    ) -> None:
        """Server-side apply: create when missing (201), else merge into the live object (200)."""
        manager = apply_manager(request)
        raw = await request.body()
        applied = (
            await run_heavy(parse_body, raw, "application/yaml", target)
            if is_heavy(len(raw))
            else parse_body(raw, "application/yaml", target)
        )
        if not isinstance(applied, dict):
            raise errors.bad_request("the applied configuration must be an object")
        metadata = applied.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        # kube's checkName on the applied result (handlers/patch.go applyPatch): the object is the URL's
        check_name(metadata, target.name, target.namespace)
        uid = metadata.get("uid")

        def merged(live: Object | None) -> Object:
            return server_side_apply(request, target, live, applied, manager, subresource)

        options = _options(request, mode, None)  # apply records ownership itself
        dry_run = _dry_run(request)
        # kube's apply is an update that may create (forceAllowCreate): a create that lost a race to
        # another writer becomes a merge into the winner, an update whose object was deleted under it
        # becomes a create (GuaranteedUpdate retries on the state it finds), never AlreadyExists
        for attempt in range(1, APPLY_ATTEMPTS + 1):
            last = attempt == APPLY_ATTEMPTS
            try:  # whether it exists: the cache's object as it is, no copy
                await store.get_rendered(target.namespace, target.name)
            except errors.APIError as error:
                if error.code != 404 or subresource:
                    raise
                if uid:  # the configuration is for an object that is gone (applyPatch's uid check)
                    raise errors.conflict(
                        target.resource.plural,
                        target.resource.group,
                        target.name,
                        f"uid mismatch: the provided object specified uid {uid}, and no existing"
                        " object was found",
                    ) from None
                try:
                    created = await store.create(
                        target.namespace,
                        await run_heavy(merged, None) if options.heavy else merged(None),
                        dry_run=dry_run,
                        version=target.version,
                        options=options,
                    )
                except errors.APIError as exists:
                    if exists.reason != "AlreadyExists" or last:
                        raise
                    continue
                await self._send_object(request, send, 201, created, target)
                return
            try:
                updated = await store.update(
                    target.namespace,
                    target.name,
                    merged,
                    subresource=subresource,
                    dry_run=dry_run,
                    version=target.version,
                    options=options,
                )
            except errors.APIError as gone:
                if gone.code != 404 or subresource or last:
                    raise
                continue
            await self._send_object(request, send, 200, updated, target)
            return

    async def _delete(self, request: Request, send: Send, store: Store, target: Target) -> None:
        options = await _delete_options(request)
        propagation = Propagation.from_options(options)
        preconditions = options.get("preconditions") or {}
        obj, deleted = await store.delete(
            target.namespace,
            target.name,
            uid_precondition=str(preconditions.get("uid") or ""),
            version_precondition=str(preconditions.get("resourceVersion") or ""),
            dry_run=_dry_run(request) or "All" in (options.get("dryRun") or []),
            options=WriteOptions(user=request.user, warnings=request.warnings),
            propagation=propagation,
        )
        if deleted and not store.delete_returns_object:
            # built-in stores answer a finished delete with a Status (no ReturnDeletedObject)
            details = {
                "name": target.name,
                "kind": target.resource.plural,
                "uid": obj["metadata"].get("uid"),
            }
            if target.resource.group:
                details["group"] = target.resource.group
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            }
            content_type, body = status_body(status, prefers_protobuf(_accept(request)))
            await respond(send, 200, body, content_type, warnings=request.warnings)
            return
        # kube's DeleteResource: 202 only for a pending delete that asked for orphanDependents=false
        code = 202 if not deleted and propagation.orphan_dependents is False else 200
        await self._send_object(request, send, code, obj, target)

    async def _delete_collection(
        self, request: Request, send: Send, store: Store, target: Target
    ) -> None:
        propagation = Propagation.from_options(await _delete_options(request))
        page = await store.list(target.namespace, self._list_options(request, target, store))
        deleted = []
        for obj in page.items:
            metadata = obj["metadata"]
            try:
                gone, _ = await store.delete(
                    metadata.get("namespace"),
                    metadata["name"],
                    dry_run=_dry_run(request),
                    options=WriteOptions(user=request.user, warnings=request.warnings),
                    propagation=propagation,
                )
            except errors.APIError as error:
                if error.code == 404:
                    continue
                raise
            deleted.append(gone)
        deleted = [
            to_version(obj, target.resource, target.version)
            for obj in await converted(deleted, target.resource, target.version)
        ]
        metadata = {"resourceVersion": str(await store.current_revision())}
        asked = _negotiated(request, target)
        negotiated = Negotiated(Output.OBJECT, asked.protobuf, asked.yaml)
        content_type, body = list_body(deleted, negotiated, target, "", metadata)
        await respond(send, 200, body, content_type, warnings=request.warnings)

    # -- subresources ------------------------------------------------------------------------------

    async def _subresource(
        self, request: Request, send: Send, store: Store, target: Target, name: str
    ) -> None:
        """A subresource's method, routed (routes.subresource_verb has refused the others)."""
        creater = self.creaters.get((target.resource.group, target.resource.plural, name))
        if creater is not None:
            await self._create_subresource(request, send, target, name, creater)
        elif name == "scale":
            await self._scale(request, send, store, target)
        elif request.method == "GET":  # the status subresource, the only one with a GET
            obj = await store.get(target.namespace, target.name)
            await self._send_object(request, send, 200, obj, target)
        elif request.method == "PUT":  # status, or one of the strategy's update_subresources
            mode = field_validation(request.query)
            body = await self._read_body(request, target)
            await self._replace(request, send, store, target, body, mode, name)
        else:
            await self._patch(request, send, store, target, "status")

    async def _create_subresource(
        self, request: Request, send: Send, target: Target, name: str, creater: BoundCreater
    ) -> None:
        """A POST of the body's kind, decoded and validated as that kind (kube's createHandler with a
        NamedCreater), answered 201 with the handler's object, as kube answers a TokenRequest."""
        if target.resource.namespaced and target.namespace is None:
            raise errors.method_not_allowed()
        body_target = Target(creater.body, creater.version, target.namespace, target.name)
        mode = field_validation(request.query)
        obj = await self._read_object(request, body_target)
        dry_run = _dry_run(request)
        namespace = target.namespace or ""
        write = Write(
            creater.body, creater.version, namespace, target.name, Operation.CREATE, name, dry_run
        )
        options = WriteOptions(request.user, mode, request.warnings)
        # pruned, defaulted and validated as its kind; no admission plugin judges these bodies yet
        internal = await admit(obj, write, AdmissionChain(), options)
        attributes = Attributes(
            Operation.CREATE,
            target.resource,
            target.version,
            namespace,
            target.name,
            internal,
            None,
            request.user,
            name,
            dry_run,
            request.warnings,
        )
        answer = await creater.handler.create(attributes)
        await self._send_object(request, send, 201, answer, body_target)

    async def _scale(self, request: Request, send: Send, store: Store, target: Target) -> None:
        spec = target.version.scale
        assert spec is not None
        if request.method == "GET":
            (stored,) = await converted(
                [await store.get(target.namespace, target.name)], target.resource, target.version
            )
            obj = to_version(stored, target.resource, target.version)
            await respond_json(send, 200, scale_of(obj, spec), request.warnings)
            return
        body = await request.body()
        if request.method == "PUT":
            desired = parse_body(body, request.content_type, target)
            if not isinstance(desired, dict):
                raise errors.bad_request("the body must be a Scale object")
            change: Callable[[Object], Object] = lambda _scale: desired  # noqa: E731
        else:
            patcher = _patcher(request.content_type, target.version)
            try:
                patch = load_json(body)
            except orjson.JSONDecodeError as error:
                raise errors.bad_request(f"error decoding patch: {error}") from None

            def change(scale: Object) -> Object:
                try:
                    return patcher(scale, patch)
                except PatchError as error:
                    raise patch_failure(error) from None

        def try_update(current: Object) -> Object:
            # on a copy: ``current`` is the old object the write's ownership is computed against
            return apply_scale(deep_copy(current), change(scale_of(current, spec)), spec, target)

        # kube's ScaleHandler: the Scale's replicas are recorded as the parent's replicas field, owned by
        # this manager with ``subresource: scale`` and taken from every other manager when they change, so
        # a later apply of replicas conflicts instead of silently reverting the scale
        # (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager/scalehandler.go)
        options = WriteOptions(
            user=request.user,
            warnings=request.warnings,
            tracker=lambda old: tracker(request, target, old, "scale", shared=False),
        )
        updated = await store.update(
            target.namespace,
            target.name,
            try_update,
            subresource="scale",  # admission sees the write as kube's: a rule on */scale selects it
            dry_run=_dry_run(request),
            version=target.version,
            options=options,
        )
        (updated,) = await converted([updated], target.resource, target.version)
        versioned = to_version(updated, target.resource, target.version)
        await respond_json(send, 200, scale_of(versioned, spec), request.warnings)


@dataclass
class _Body:
    """A request body, parsed once up front and again for every retry of an update: admission mutates
    the object it gets, and parsing the bytes again is cheaper than a deep copy kept for a retry that
    seldom comes."""

    raw: bytes
    content_type: str
    target: Target
    parsed: Object = field(init=False)
    _taken: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.parsed = self.parse()  # a malformed body is refused before anything else happens

    def parse(self) -> Object:
        return check_type_meta(parse_body(self.raw, self.content_type, self.target), self.target)

    def take(self) -> Object:
        """The parsed body the first time, a fresh parse after that."""
        if self._taken:
            return self.parse()
        self._taken = True
        return self.parsed


def _options(
    request: Request, mode: str, tracker: Callable[[Object | None], Track | None] | None
) -> WriteOptions:
    """A client's write: its user, its fieldValidation, its warnings, its field manager, and whether its
    body is large enough to be worked on off the event loop."""
    return WriteOptions(request.user, mode, request.warnings, tracker, is_heavy(request.body_size))


async def _wait_until_fresh(request: Request, store: Store) -> None:
    """A read at a resourceVersion not reached yet waits for it (kube's cacher, waitUntilFreshAndBlock):
    ``0`` is any state, and an Exact list is answered by storage at that revision, refused if future."""
    resource_version = request.query.get("resourceVersion", "")
    if resource_version in ("", "0") or request.query.get("resourceVersionMatch") == EXACT:
        return
    await wait_until_fresh(store.current_revision, parse_resource_version(resource_version))


def _accept(request: Request) -> str:
    return request.headers.get("accept", "")


def _negotiated(request: Request, target: Target) -> Negotiated:
    return negotiate(_accept(request), target.version.protobuf is not None)


def _check_acceptable(request: Request, target: Target) -> None:
    """406 before anything happens when the client accepts nothing the server speaks, as kube's handlers
    negotiate the output first: a write must never land and then go unanswered."""
    if not acceptable(_accept(request)):
        served = ["application/json", "application/yaml"]
        has_codec = target.version.protobuf is not None
        raise errors.not_acceptable([*served, protobuf.CONTENT_TYPE] if has_codec else served)
    include = request.query.get("includeObject", "")
    if include not in INCLUDE_OBJECT and _negotiated(request, target).output is Output.TABLE:
        # kube's optionsForTransform (endpoints/handlers/response.go) with ValidateTableOptions; kube
        # checks when it answers, after a write has landed: here before, so the 400 changes nothing
        raise errors.bad_request(
            f"Unable to convert to Table as requested: includeObject: Invalid value: "
            f"{go_quoted(include)}: must be 'Metadata', 'Object', 'None', or empty"
        )


def _is_json_object(negotiated: Negotiated) -> bool:
    return negotiated.output is Output.OBJECT and not negotiated.protobuf and not negotiated.yaml


def _plain_json(request: Request, target: Target) -> bool:
    return _is_json_object(_negotiated(request, target))


_PATCH_FAILURE_REASONS = {400: "BadRequest", 413: "RequestEntityTooLarge", 422: "Invalid"}


def patch_failure(error: PatchError) -> errors.APIError:
    """kube answers an inapplicable patch with a generic message (NewGenericServerResponse); the library's
    own explanation travels as a cause so that a person can still see what went wrong."""
    cause = errors.StatusCause("UnexpectedServerResponse", error.message)
    return errors.APIError(
        error.code,
        _PATCH_FAILURE_REASONS.get(error.code, "BadRequest"),
        error.status_message,
        causes=[cause],
    )


def _dry_run(request: Request) -> bool:
    value = request.query.get("dryRun", "")
    if value and value != "All":
        raise errors.bad_request(f'unsupported dry run directive: "{value}"; supported values: All')
    return value == "All"


async def _delete_options(request: Request) -> Object:
    body = await request.body()
    if not body.strip():
        return _query_delete_options(request)
    try:
        if (
            request.content_type == protobuf.CONTENT_TYPE
        ):  # client-go's typed clients, for built-in kinds
            return protobuf.decode(body, DELETE_OPTIONS)
        options = load_json(body)
    except (protobuf.ProtobufError, orjson.JSONDecodeError) as error:
        raise errors.bad_request(f"error decoding DeleteOptions: {error}") from None
    if not isinstance(options, dict):
        raise errors.bad_request("DeleteOptions must be a JSON object")
    # the fields read here must have their Go types, or kube cannot decode the body (400)
    if not isinstance(options.get("preconditions") or {}, dict):
        raise errors.bad_request("DeleteOptions.preconditions must be an object")
    if not isinstance(options.get("dryRun") or [], list):
        raise errors.bad_request("DeleteOptions.dryRun must be a list of strings")
    return options


# the spellings Go's strconv.ParseBool accepts
_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def _query_delete_options(request: Request) -> Object:
    """DeleteOptions from the query, which kube reads when the body is empty (ParameterCodec): the
    propagation fields are what clients such as curl users and the Python client's query style send."""
    options: Object = {}
    policy = request.query.get("propagationPolicy")
    if policy is not None:
        options["propagationPolicy"] = policy
    orphan = request.query.get("orphanDependents")
    if orphan is not None:
        value = _GO_BOOLS.get(orphan)
        if value is None:  # Go's strconv.ParseBool, as the parameter codec reads it
            raise errors.bad_request(f'strconv.ParseBool: parsing "{orphan}": invalid syntax')
        options["orphanDependents"] = value
    return options


def _patcher(content_type: str, version: VersionType) -> Callable[[Object, Any], Object]:
    if content_type == MERGE_PATCH:
        return apply_merge_patch
    if content_type == JSON_PATCH:
        return apply_json_patch
    if content_type == STRATEGIC_PATCH and version.strategic_merge_patch:
        return lambda obj, patch: apply_strategic_merge_patch(obj, patch, version.schema)
    # the accepted types in kube's order (customresource_handler.go for custom resources)
    accepted = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    if version.strategic_merge_patch:
        accepted.insert(2, STRATEGIC_PATCH)
    raise errors.unsupported_media_type(accepted)
