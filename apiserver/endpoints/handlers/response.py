"""Output negotiation and the answer of one object (kube's handlers/response.go, transformResponseObject)."""

from __future__ import annotations

from collections.abc import Awaitable

import orjson

from apiserver.encoding import protobuf
from apiserver.endpoints.decode import Target
from apiserver.endpoints.http import Request, Send, respond
from apiserver.endpoints.output import (
    JSON_OBJECT,
    JSON_TYPE,
    Negotiated,
    Output,
    acceptable,
    negotiate,
    object_body,
)
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.admit import go_quoted
from apiserver.registry.offload import run_heavy
from apiserver.registry.versioning import converted, to_version

INCLUDE_OBJECT = frozenset(("", "None", "Metadata", "Object"))
"""The includeObject values of a Table request (metav1.IncludeObjectPolicy)."""


def send_object(
    request: Request, send: Send, status: int, obj: Object, target: Target
) -> Awaitable[None]:
    """One object in the version, form and encoding the client asked for. The common answer, the object
    itself as JSON, is encoded at once and handed to ``respond``: no coroutine of its own."""
    asked = negotiated(request, target)
    if asked is JSON_OBJECT and target.resource.converter is None:
        body = orjson.dumps(to_version(obj, target.resource, target.version))
        return respond(send, status, body, JSON_TYPE, warnings=request.warnings)
    return _send_negotiated(request, send, status, obj, target, asked)


async def _send_negotiated(
    request: Request, send: Send, status: int, obj: Object, target: Target, asked: Negotiated
) -> None:
    check_partial_shape(asked, target, is_list=False)
    if target.resource.converter is not None:
        (obj,) = await converted([obj], target.resource, target.version)
    versioned = to_version(obj, target.resource, target.version)
    include_object = request.query.get("includeObject", "")
    if asked.yaml:  # ~0.8 ms per KiB on the loop: every YAML answer is rendered off it
        content_type, body = await run_heavy(object_body, versioned, asked, target, include_object)
    else:
        content_type, body = object_body(versioned, asked, target, include_object)
    await respond(send, status, body, content_type, warnings=request.warnings)


def accept(request: Request) -> str:
    return request.headers.get("accept", "")


def negotiated(request: Request, target: Target) -> Negotiated:
    return negotiate(accept(request), target.version.protobuf is not None)


def check_acceptable(request: Request, target: Target) -> None:
    """406 before anything happens when the client accepts nothing the server speaks, as kube's handlers
    negotiate the output first: a write must never land and then go unanswered."""
    if not acceptable(accept(request)):
        served = ["application/json", "application/yaml"]
        has_codec = target.version.protobuf is not None
        raise errors.not_acceptable([*served, protobuf.CONTENT_TYPE] if has_codec else served)
    include = request.query.get("includeObject", "")
    if include not in INCLUDE_OBJECT and negotiated(request, target).output is Output.TABLE:
        # kube's optionsForTransform (endpoints/handlers/response.go) with ValidateTableOptions; kube
        # checks when it answers, after a write has landed: here before, so the 400 changes nothing
        raise errors.bad_request(
            f"Unable to convert to Table as requested: includeObject: Invalid value: "
            f"{go_quoted(include)}: must be 'Metadata', 'Object', 'None', or empty"
        )


def check_partial_shape(asked: Negotiated, target: Target, *, is_list: bool) -> None:
    """406 for PartialObjectMetadataList of one object or PartialObjectMetadata of a list, as kube's
    asPartialObjectMetadata(List) refuse them (endpoints/handlers/response.go), naming the Go type."""
    if asked.output is not Output.PARTIAL or asked.as_list == is_list:
        return
    resource = target.resource
    if resource.builtin:  # the internal types' package: the one of the resource it is stored as
        group = resource.stored_as[0] if resource.stored_as else resource.group
        package = group.split(".")[0] if group else "core"
        go_type = f"*{package}.{resource.kind}"
    else:
        go_type = "*unstructured.Unstructured"
    if is_list:
        detail = f"you requested PartialObjectMetadata, but the requested object is a list ({go_type}List)"
    else:
        detail = f"you requested PartialObjectMetadataList, but the requested object is not a list ({go_type})"
    raise errors.APIError(406, "NotAcceptable", detail)


def is_json_object(asked: Negotiated) -> bool:
    """Whether the answer is the object itself as JSON: what storage's cached JSON can be sent as."""
    return asked.output is Output.OBJECT and not asked.protobuf and not asked.yaml


def plain_json(request: Request, target: Target) -> bool:
    return is_json_object(negotiated(request, target))
