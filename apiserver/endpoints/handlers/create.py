"""POST of a new object, and of a create subresource's body (kube's handlers/create.go: createHandler, with a
NamedCreater for a subresource such as serviceaccounts/token)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Attributes, Operation
from apiserver.endpoints.decode import Target
from apiserver.endpoints.fields import tracker
from apiserver.endpoints.handlers.response import send_object
from apiserver.endpoints.handlers.rest import read_object, write_options, write_query
from apiserver.endpoints.http import Request, Send
from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.admit import Write, WriteOptions, admit
from apiserver.registry.identity import check_namespace
from apiserver.registry.store import Store
from apiserver.registry.subresource import NamedCreater
from apiserver.schema.options import CREATE


@dataclass(frozen=True, slots=True)
class BoundCreater:
    """A create subresource as served: its body's resource and version, and the handler that answers."""

    body: ResourceType
    version: VersionType
    handler: NamedCreater


async def create(request: Request, send: Send, store: Store, target: Target) -> None:
    if target.resource.namespaced and target.namespace is None:
        raise errors.method_not_allowed()
    if store.terminating:
        raise errors.terminating_create(target.resource.group, target.resource.plural)
    query = write_query(request, CREATE)
    obj = await read_object(request, target)
    metadata = obj["metadata"]
    request.audit_request_object(metadata)
    check_namespace(metadata, target.namespace)
    # a partial, not a lambda: no function object built and no Python frame between admit and the tracker
    options = write_options(request, query.mode, partial(tracker, request, target))
    created = await store.create(
        target.namespace,
        obj,
        dry_run=query.dry_run,
        version=target.version,
        options=options,
    )
    await send_object(request, send, 201, created, target)


async def create_subresource(
    request: Request, send: Send, target: Target, name: str, creater: BoundCreater
) -> None:
    """A POST of the body's kind, decoded and validated as that kind, answered 201 with the handler's
    object, as kube answers a TokenRequest."""
    if target.resource.namespaced and target.namespace is None:
        raise errors.method_not_allowed()
    body_target = Target(creater.body, creater.version, target.namespace, target.name)
    query = write_query(request, CREATE)
    obj = await read_object(request, body_target)
    dry = query.dry_run
    namespace = target.namespace or ""
    write = Write(
        creater.body, creater.version, namespace, target.name, Operation.CREATE, name, dry
    )
    options = WriteOptions(request.user, query.mode, request.warnings)
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
        dry,
        request.warnings,
    )
    answer = await creater.handler.create(attributes)
    await send_object(request, send, 201, answer, body_target)
