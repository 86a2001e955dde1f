"""PUT of an object or of its status (kube's handlers/update.go: UpdateResource)."""

from __future__ import annotations

from apiserver.endpoints.decode import Target
from apiserver.endpoints.fields import tracker
from apiserver.endpoints.handlers.response import send_object
from apiserver.endpoints.handlers.rest import read_body, write_options, write_query
from apiserver.endpoints.http import Request, Send
from apiserver.registry.identity import check_name
from apiserver.registry.store import Store
from apiserver.schema.options import UPDATE


async def update(
    request: Request, send: Send, store: Store, target: Target, subresource: str = ""
) -> None:
    """The body replaces the current object (of which it shares nothing: it is a parse of its own, so
    ownership is recorded against the stored object without copying it). As kube's update handler: the
    body's namespace, then its name are the URL's, and its uid, if any, the stored object's."""
    query = write_query(request, UPDATE)
    body = await read_body(request, target)
    metadata = body.parsed["metadata"]
    check_name(metadata, target.name, target.namespace)
    options = write_options(
        request, query.mode, lambda old: tracker(request, target, old, subresource, shared=False)
    )
    updated = await store.update(
        target.namespace,
        target.name,
        lambda _current: body.take(),
        subresource=subresource,
        dry_run=query.dry_run,
        version=target.version,
        options=options,
        uid_precondition=str(metadata.get("uid") or ""),
    )
    await send_object(request, send, 200, updated, target)
