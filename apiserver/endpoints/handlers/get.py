"""GET of one object, a list and a watch (kube's handlers/get.go: GetResource, ListResource)."""

from __future__ import annotations

import orjson

from apiserver.encoding import protobuf
from apiserver.endpoints.decode import Target
from apiserver.endpoints.handlers.response import (
    check_partial_shape,
    is_json_object,
    negotiated,
    plain_json,
    send_object,
)
from apiserver.endpoints.handlers.rest import list_options, wait_until_fresh_for
from apiserver.endpoints.http import Request, Send, respond, respond_parts
from apiserver.endpoints.output import (
    joined_untyped,
    list_body,
    object_list_metadata,
    retyped_bytes,
)
from apiserver.endpoints.resourceversion import validate_list_options
from apiserver.endpoints.watch import serve_watch
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.metrics.registry import Metrics
from apiserver.registry.offload import is_heavy, run_heavy
from apiserver.registry.store import Store
from apiserver.registry.versioning import converted, to_version


async def get(request: Request, send: Send, store: Store, target: Target) -> None:
    """One object; the storage version's cached JSON as it is when that is what the client asked for."""
    await wait_until_fresh_for(request, store)
    obj, raw = await store.get_rendered(target.namespace, target.name)
    if (
        raw is not None
        and target.resource.wire_is_internal(target.version)
        and plain_json(request, target)
    ):
        if (
            request.replay is not None
        ):  # the same request answers the same while the object is cached
            request.replay.depends_on_handler(store.unchanged(target.namespace, target.name, raw))
        await respond(send, 200, raw, warnings=request.warnings)
    else:
        await send_object(request, send, 200, obj, target)


async def list_objects(request: Request, send: Send, store: Store, target: Target) -> None:
    validate_list_options(request.query)
    options = list_options(request, target, store)
    await wait_until_fresh_for(request, store)
    page = await store.list(target.namespace, options)
    asked = negotiated(request, target)
    check_partial_shape(asked, target, is_list=True)
    metadata: Object = {"resourceVersion": str(page.revision)}
    if page.continue_token:
        metadata["continue"] = page.continue_token
        if page.remaining:
            metadata["remainingItemCount"] = page.remaining
    if (
        page.encoded is not None
        and is_json_object(asked)
        and target.resource.wire_is_internal(target.version)
    ):
        # the storage version's items are the cached JSON as is: joined once, not re-encoded, and sent
        # between head and tail without copying the whole body again
        head = orjson.dumps(
            {
                "apiVersion": target.api_version,
                "kind": target.resource.list_kind,
                "metadata": object_list_metadata(metadata, target.version),
            }
        )
        items_json = (
            await run_heavy(_joined_items, page.encoded, target)
            if _join_is_heavy(page.encoded, target)
            else _joined_items(page.encoded, target)
        )
        parts = (head[:-1] + b',"items":[', items_json, b"]}")
        await respond_parts(send, 200, parts, warnings=request.warnings)
        return
    # one conversion review per page, as kube's webhook converter takes a whole list
    page_items = await converted(page.items, target.resource, target.version)
    items = [to_version(obj, target.resource, target.version) for obj in page_items]
    include_object = request.query.get("includeObject", "")
    if asked.yaml:  # rendered off the loop, as one object is
        content_type, body = await run_heavy(
            list_body, items, asked, target, include_object, metadata
        )
    else:
        content_type, body = list_body(items, asked, target, include_object, metadata)
    await respond(send, 200, body, content_type, warnings=request.warnings)


JOIN_ON_LOOP_BYTES = 2 * 1024 * 1024
"""The most of a list's items joined on the event loop: a copy at memory speed (~0.5 ms for 2 MiB on a loaded
core), less than the hop to the worker thread and back costs a small list. A LIST of 1,000 CronTabs (1.6 MB)
stays on the loop; a flood of 4 MB lists leaves it, so that probes are answered meanwhile."""


def _join_is_heavy(encoded: list[bytes], target: Target) -> bool:
    """Whether joining the items is worth the worker thread (registry.offload): a large list, or items that
    must be decoded and encoded again (``joined_untyped``) beyond a write's heavy size."""
    if sum(map(len, encoded)) > JOIN_ON_LOOP_BYTES:
        return True
    resource = target.resource
    return resource.builtin and is_heavy(retyped_bytes(encoded, target.api_version, resource.kind))


def _joined_items(encoded: list[bytes], target: Target) -> bytes:
    """The rendered items of a list, comma-joined; a built-in kind's without apiVersion and kind."""
    if target.resource.builtin:
        return joined_untyped(encoded, target.api_version, target.resource.kind)
    return b",".join(encoded)


async def watch(
    request: Request, send: Send, store: Store, target: Target, metrics: Metrics
) -> None:
    """A list with ``watch``: the stream of events (kube's ListResource hands it to serveWatch)."""
    validate_list_options(request.query, watch=True)
    options = list_options(request, target, store)
    asked = negotiated(request, target)
    if asked.yaml:  # kube streams only what has a stream serializer, which YAML has not
        codec = [protobuf.CONTENT_TYPE] if target.version.protobuf is not None else []
        raise errors.not_acceptable(["application/json", *codec])
    kind = (target.resource.group, target.version.name, target.resource.kind)
    with metrics.watcher(kind) as sent:
        await serve_watch(request, send, store, target, options.predicate, asked, sent)
