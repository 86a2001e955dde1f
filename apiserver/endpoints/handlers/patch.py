"""PATCH: JSON, merge and strategic merge patches, and server-side apply (kube's handlers/patch.go)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from apiserver.encoding.limits import load_json
from apiserver.endpoints.decode import Target, check_type_meta, parse_body
from apiserver.endpoints.fields import manager_name, server_side_apply, tracker
from apiserver.endpoints.handlers.response import send_object
from apiserver.endpoints.handlers.rest import WriteQuery, write_options, write_query
from apiserver.endpoints.http import Request, Send
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import VersionType
from apiserver.patch.jsonpatch import PatchError, apply_json_patch, apply_merge_patch
from apiserver.patch.strategic import apply_strategic_merge_patch
from apiserver.registry.identity import check_name
from apiserver.registry.offload import is_heavy, run_heavy
from apiserver.registry.store import Store
from apiserver.schema.options import PATCH

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_ATTEMPTS = 5
"""Tries of a server-side apply whose object another writer creates or deletes in between: each lost
race means someone else's write landed, so a few tries are ample (the last error is answered)."""


async def patch(
    request: Request, send: Send, store: Store, target: Target, subresource: str
) -> None:
    if request.content_type == APPLY_PATCH:
        await apply(
            request, send, store, target, subresource, write_query(request, PATCH, apply=True)
        )
        return
    patcher = patcher_of(
        request.content_type, target.version
    )  # kube's 415 comes before the options
    query = write_query(request, PATCH)
    raw = await request.body()
    try:
        document = await run_heavy(load_json, raw) if is_heavy(len(raw)) else load_json(raw)
    except orjson.JSONDecodeError as error:
        raise errors.bad_request(f"error decoding patch: {error}") from None

    def try_update(current: Object) -> Object:
        try:
            patched = patcher(current, document)
        except PatchError as error:
            raise patch_failure(error) from None
        patched = check_type_meta(patched, target)
        # kube's patcher.applyPatch: the patched object is still the URL's
        check_name(patched["metadata"], target.name, target.namespace)
        return patched

    # the patched object shares what the patch left alone with the stored one: tracked on a copy
    options = write_options(
        request, query.mode, lambda old: tracker(request, target, old, subresource)
    )
    updated = await store.update(
        target.namespace,
        target.name,
        try_update,
        subresource=subresource,
        dry_run=query.dry_run,
        version=target.version,
        options=options,
    )
    await send_object(request, send, 200, updated, target)


async def apply(
    request: Request, send: Send, store: Store, target: Target, subresource: str, query: WriteQuery
) -> None:
    """Server-side apply: create when missing (201), else merge into the live object (200)."""
    manager = manager_name(request)  # write_query made sure there is a fieldManager
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

    options = write_options(request, query.mode, None)  # apply records ownership itself
    dry = query.dry_run
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
                    dry_run=dry,
                    version=target.version,
                    options=options,
                )
            except errors.APIError as exists:
                if exists.reason != "AlreadyExists" or last:
                    raise
                continue
            await send_object(request, send, 201, created, target)
            return
        try:
            updated = await store.update(
                target.namespace,
                target.name,
                merged,
                subresource=subresource,
                dry_run=dry,
                version=target.version,
                options=options,
            )
        except errors.APIError as gone:
            if gone.code != 404 or subresource or last:
                raise
            continue
        await send_object(request, send, 200, updated, target)
        return


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


def patcher_of(content_type: str, version: VersionType) -> Callable[[Object, Any], Object]:
    """The patch function of a Content-Type, or 415 with the types the kind accepts."""
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
