"""DELETE of one object and of a collection (kube's handlers/delete.go: DeleteResource,
DeleteCollection), with DeleteOptions from the body or the query."""

from __future__ import annotations

import orjson

from apiserver.encoding import protobuf
from apiserver.encoding.limits import load_json
from apiserver.encoding.protobuf_meta import DELETE_OPTIONS
from apiserver.endpoints.decode import Target
from apiserver.endpoints.handlers.response import accept, negotiated, send_object
from apiserver.endpoints.handlers.rest import list_options
from apiserver.endpoints.http import Request, Send, query_bool, respond
from apiserver.endpoints.output import Negotiated, Output, list_body, prefers_protobuf, status_body
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.admit import WriteOptions
from apiserver.registry.deletion import Propagation
from apiserver.registry.store import Store
from apiserver.registry.versioning import converted, to_version


async def delete(request: Request, send: Send, store: Store, target: Target) -> None:
    options = await delete_options(request)
    propagation = Propagation.from_options(options)
    preconditions = options.get("preconditions") or {}
    obj, deleted = await store.delete(
        target.namespace,
        target.name,
        uid_precondition=str(preconditions.get("uid") or ""),
        version_precondition=str(preconditions.get("resourceVersion") or ""),
        dry_run=bool(options.get("dryRun")),  # kube's dryrun.IsDryRun, once every value is All
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
        content_type, body = status_body(status, prefers_protobuf(accept(request)))
        await respond(send, 200, body, content_type, warnings=request.warnings)
        return
    # kube's DeleteResource: 202 only for a pending delete that asked for orphanDependents=false
    code = 202 if not deleted and propagation.orphan_dependents is False else 200
    await send_object(request, send, code, obj, target)


async def delete_collection(request: Request, send: Send, store: Store, target: Target) -> None:
    options = await delete_options(request)
    propagation = Propagation.from_options(options)
    page = await store.list(target.namespace, list_options(request, target, store))
    deleted = []
    for obj in page.items:
        metadata = obj["metadata"]
        try:
            gone, _ = await store.delete(
                metadata.get("namespace"),
                metadata["name"],
                dry_run=bool(options.get("dryRun")),
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
    asked = negotiated(request, target)
    as_objects = Negotiated(Output.OBJECT, asked.protobuf, asked.yaml)
    content_type, body = list_body(deleted, as_objects, target, "", metadata)
    await respond(send, 200, body, content_type, warnings=request.warnings)


async def delete_options(request: Request) -> Object:
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


def _query_delete_options(request: Request) -> Object:
    """DeleteOptions from the query, which kube reads when the body is empty (ParameterCodec): the
    propagation fields are what clients such as curl users and the Python client's query style send."""
    options: Object = {}
    if "dryRun" in request.query:
        options["dryRun"] = [request.query["dryRun"]]
    policy = request.query.get("propagationPolicy")
    if policy is not None:
        options["propagationPolicy"] = policy
    if "orphanDependents" in request.query:  # a *bool: set when present
        options["orphanDependents"] = query_bool(request.query["orphanDependents"])
    return options
