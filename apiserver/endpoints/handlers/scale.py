"""GET, PUT and PATCH of the scale subresource: the Scale read from and written into the parent object
(kube's ScaleREST over the generic update and patch handlers)."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from apiserver.encoding.limits import load_json
from apiserver.endpoints.decode import Target, parse_body
from apiserver.endpoints.fields import tracker
from apiserver.endpoints.handlers.patch import patch_failure, patcher_of
from apiserver.endpoints.handlers.rest import write_query
from apiserver.endpoints.http import Request, Send, respond_json
from apiserver.endpoints.scale import apply_scale, scale_of
from apiserver.machinery import errors
from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object
from apiserver.patch.jsonpatch import PatchError
from apiserver.registry.admit import WriteOptions
from apiserver.registry.store import Store
from apiserver.registry.versioning import converted, to_version
from apiserver.schema.options import PATCH, UPDATE


async def scale(request: Request, send: Send, store: Store, target: Target) -> None:
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
        query = write_query(request, UPDATE)
        desired = parse_body(body, request.content_type, target)
        if not isinstance(desired, dict):
            raise errors.bad_request("the body must be a Scale object")
        change: Callable[[Object], Object] = lambda _scale: desired  # noqa: E731
    else:
        patcher = patcher_of(request.content_type, target.version)
        query = write_query(request, PATCH)
        try:
            patch = load_json(body)
        except orjson.JSONDecodeError as error:
            raise errors.bad_request(f"error decoding patch: {error}") from None

        def change(current_scale: Object) -> Object:
            try:
                return patcher(current_scale, patch)
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
        dry_run=query.dry_run,
        version=target.version,
        options=options,
    )
    (updated,) = await converted([updated], target.resource, target.version)
    versioned = to_version(updated, target.resource, target.version)
    await respond_json(send, 200, scale_of(versioned, spec), request.warnings)
