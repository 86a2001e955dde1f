"""What a write's object goes through in the version it was written in, before the Store converts it to the
hub and stores it: pruning of unknown fields (per ``fieldValidation``), defaulting, the mutating admission
plugins, then validation (ObjectMeta, the schema, CEL rules with ratcheting), as kube's decoder, admission and
the strategy's Validate do. The Store calls it for every write, so nothing can store an unvalidated object,
whoever writes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Attributes, Operation, ValidationInterface
from apiserver.authentication.user import LOOPBACK, UserInfo
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.identity import ensure_namespace
from apiserver.registry.offload import run_heavy
from apiserver.registry.versioning import to_hub
from apiserver.schema import Cause, prune_nulls, prune_resource, validate_object_meta
from apiserver.schema.causes import TYPE_INVALID
from apiserver.schema.cel import validate_rules
from apiserver.schema.godecode import decode_error
from apiserver.schema.gointegers import integer_causes
from apiserver.schema.metafields import is_clean
from apiserver.schema.objectmeta import NameFunc, name_is_dns_subdomain
from apiserver.schema.ratchet import ratchet
from apiserver.schema.scalepaths import scale_causes
from apiserver.schema.structural import compile_schema

_C1_AND_DEL = re.compile("[\x7f-\x9f]")  # the control characters JSON leaves as they are
Track = Callable[[Object], None]


@dataclass(slots=True)
class WriteOptions:
    """How one write is made (kube's request context with Create/UpdateOptions): by whom, how unknown fields
    are treated, where warnings go, and who records field ownership. The defaults are the server's own writes:
    the loopback user, unknown fields dropped silently, ownership not tracked."""

    user: UserInfo = LOOPBACK
    field_validation: str = "Ignore"
    warnings: list[str] = field(default_factory=list)
    tracker: Callable[[Object | None], Track | None] | None = None
    """Given the stored object (None on create), records managedFields on the object about to be stored."""
    heavy: bool = False
    """The client's body is large: its pipeline runs off the event loop (registry.offload)."""

    def warn(self, messages: list[str]) -> None:
        """Add warnings once each: an update's pipeline runs again after a conflict."""
        if messages:
            self.warnings.extend(m for m in messages if m not in self.warnings)


def go_quoted(text: str) -> str:
    """Go's %q, as kube quotes a field path in its messages: control characters escaped, so that a field
    named with a newline still makes a valid Warning header."""
    quoted = json.dumps(text, ensure_ascii=False)  # escapes C0 controls, quotes and backslashes
    return _C1_AND_DEL.sub(lambda match: f"\\u{ord(match.group()):04x}", quoted)


def cannot_handle(resource: ResourceType, version: VersionType, detail: str) -> errors.APIError:
    kind = resource.kind
    return errors.bad_request(
        f'{kind} in version "{version.name}" cannot be handled as a {kind}: {detail}'
    )


@dataclass(frozen=True, slots=True)
class Write:
    """Where a write goes: the resource, the version its object is in, its namespace ("" when cluster-scoped)
    and its name (the URL's, on an update)."""

    resource: ResourceType
    version: VersionType
    namespace: str
    name: str
    operation: Operation
    subresource: str = ""
    dry_run: bool = False
    name_rule: NameFunc = name_is_dns_subdomain
    """The kind's rule for ``metadata.name`` (kube's ValidateNameFunc), from its strategy."""
    defaults: Track | None = None
    """The kind's decode-time defaults (``Strategy.default``), run after the schema's."""
    metadata_rule: Callable[[Object], list[Cause]] | None = None
    """What the kind checks of its metadata beyond ObjectMeta's rules (kube's core ValidateObjectMeta: the
    finalizer names of schema.kubefinalizers), reported after them."""


async def admit(
    obj: Object,
    write: Write,
    admission: AdmissionChain,
    options: WriteOptions,
    old: Object | None = None,
    heavy: bool = False,
    precondition: Callable[[Object], None] | None = None,
) -> Object:
    """Prune, default, mutate (admission) and validate a versioned object; returns it in the hub version.
    ``old`` is the stored object in the same version on an update: what ratcheting and transition rules
    (``oldSelf``) compare against, and what field ownership is recorded against. ``heavy``: the CPU parts
    run off the event loop (registry.offload), the admission plugins on it. ``precondition`` (an update's
    resourceVersion) runs between mutation and validation, where kube's GuaranteedUpdate checks it: a stale
    update is a 409 Conflict before it is judged invalid."""
    warnings: list[str] = []
    if heavy:
        await run_heavy(_prepare, obj, write, options, warnings)
    else:
        _prepare(obj, write, options, warnings)
    mutating = admission.mutating_for(write.resource, write.operation)
    if mutating:  # no attributes for a write no plugin sees
        attributes = admission_attributes(write, obj, old, options, warnings)
        for plugin in mutating:
            await plugin.admit(attributes)
    _after_mutation(obj, write, precondition)
    if heavy:
        internal = await run_heavy(_finish, obj, old, write, options, warnings)
    else:
        internal = _finish(obj, old, write, options, warnings)
    if write.resource.converter is None:  # already the hub's: no coroutine to convert nothing
        return internal
    return await to_hub(internal, write.resource)


def admit_now(
    obj: Object,
    write: Write,
    admission: AdmissionChain,
    options: WriteOptions,
    old: Object | None = None,
    precondition: Callable[[Object], None] | None = None,
) -> Object | None:
    """``admit`` where nothing in it waits, as on nearly every write (a small body, no mutating plugin for
    the write, no converter): the hub object at once, with no coroutine; None, before anything is done to
    ``obj``, where something waits (await ``admit`` then; also for a write its caller finds heavy)."""
    resource = write.resource
    if (
        options.heavy
        or resource.converter is not None
        or admission.mutating_for(resource, write.operation)
    ):
        return None
    warnings: list[str] = []
    _prepare(obj, write, options, warnings)
    _after_mutation(obj, write, precondition)
    return _finish(obj, old, write, options, warnings)


def _after_mutation(
    obj: Object, write: Write, precondition: Callable[[Object], None] | None
) -> None:
    """What follows the mutating plugins: the object kept in the request's namespace whatever they returned
    (BeforeCreate, BeforeUpdate), then an update's precondition."""
    ensure_namespace(obj["metadata"], write.namespace, write.resource.namespaced)
    if precondition is not None:
        precondition(obj)


def _prepare(obj: Object, write: Write, options: WriteOptions, warnings: list[str]) -> None:
    """What kube's decoder does before admission: unknown fields pruned (or refused, or warned about, per
    ``fieldValidation``), nulls dropped, defaults set, the URL's namespace and name taken."""
    resource, version = write.resource, write.version
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    elif not isinstance(metadata, dict):
        raise cannot_handle(resource, version, "metadata must be an object")
    schema = compile_schema(version.schema)
    if not is_clean(obj, schema):  # nearly every write is: one walk instead of the two below
        unknown = prune_resource(obj, schema)
        if unknown and options.field_validation == "Strict":
            detail = ", ".join(f"unknown field {go_quoted(path)}" for path in unknown)
            raise cannot_handle(resource, version, f"strict decoding error: {detail}")
        if unknown and options.field_validation == "Warn":
            warnings.extend(f"unknown field {go_quoted(path)}" for path in unknown)
        prune_nulls(obj, schema)  # kube drops nulls of non-nullable fields without defaults
    if version.defaulter is not None:
        version.defaulter(obj)
    if resource.namespaced and write.namespace:
        # the URL's (a different one in the body was refused)
        metadata["namespace"] = write.namespace
    else:
        # kube clears it for cluster-scoped kinds (rest.BeforeCreate)
        metadata.pop("namespace", None)
    if write.operation is Operation.UPDATE and not metadata.get("name"):
        metadata["name"] = write.name
    if write.defaults is not None:
        write.defaults(obj)


def _finish(
    obj: Object, old: Object | None, write: Write, options: WriteOptions, warnings: list[str]
) -> Object:
    """After the mutating admission: validation, the warnings, field ownership, the hub version."""
    _validate(obj, old, write, warnings)
    options.warn(warnings)
    track = options.tracker(old) if options.tracker is not None else None
    if track is not None:
        track(obj)
    return write.version.to_internal(obj)


def validate_admission(
    internal: Object | None,
    old: Object | None,
    write: Write,
    admission: AdmissionChain,
    options: WriteOptions,
) -> Awaitable[None] | None:
    """The validating admission plugins, on the final object in the hub version, to await; None where no
    plugin validates the write (no coroutine made to do nothing)."""
    validating = admission.validating_for(write.resource, write.operation)
    if not validating:
        return None
    storage = write.resource.storage_version
    hub = write if write.version is storage else Write(
        write.resource, storage, write.namespace, write.name, write.operation,
        write.subresource, write.dry_run,
    )  # fmt: skip
    attributes = admission_attributes(hub, internal, old, options, [])
    attributes.request_version = write.version
    return _validate_by(validating, attributes, options)


async def _validate_by(
    validating: list[ValidationInterface], attributes: Attributes, options: WriteOptions
) -> None:
    for plugin in validating:
        await plugin.validate(attributes)
    options.warn(attributes.warnings)


def admission_attributes(
    write: Write, obj: Object | None, old: Object | None, options: WriteOptions, warnings: list[str]
) -> Attributes:
    name = write.name or ((obj or {}).get("metadata") or {}).get("name") or ""
    return Attributes(
        write.operation, write.resource, write.version, write.namespace, str(name), obj, old,
        options.user, write.subresource, write.dry_run, warnings,
    )  # fmt: skip


def _validate(
    obj: Object,
    old: Object | None,
    write: Write,
    warnings: list[str],
) -> None:
    """422 with every cause found, or 400 for values of the wrong JSON type where kube's Go decoder would
    have refused them first."""
    resource, version = write.resource, write.version
    metadata = obj["metadata"]
    causes = (
        validate_object_meta(metadata, resource.namespaced, name_fn=write.name_rule)
        if resource.persisted
        else []
    )
    if resource.persisted and write.metadata_rule is not None:
        causes.extend(write.metadata_rule(metadata))
    # kube decodes ObjectMeta into Go types before any validation: a wrong JSON type there is a 400
    if causes:
        _refuse_undecodable(causes, resource, version, obj if resource.builtin else None)
    if version.validator is not None:
        schema_causes = version.validator(obj)
        if resource.builtin:
            # kube decodes a built-in kind's body into its Go struct first: a value of the wrong JSON type
            # anywhere is a 400 there, before any validation (transformDecodeError in
            # k8s.io/apiserver/pkg/endpoints/handlers); a custom resource's is a 422 schema error
            refused = {c.field for c in schema_causes if c.reason == TYPE_INVALID}
            schema_causes.extend(
                cause for cause in integer_causes(obj, version.schema) if cause.field not in refused
            )
            if schema_causes:
                _refuse_undecodable(schema_causes, resource, version, obj)
        elif schema_causes:  # an update may keep what a stricter schema now refuses (ratcheting)
            schema_causes = ratchet(schema_causes, obj, old, version.schema)
        causes.extend(schema_causes)
    if not resource.builtin:  # what the scale subresource reads, then x-kubernetes-validations
        causes.extend(scale_causes(obj, version.scale, write.subresource != "status"))
        causes.extend(validate_rules(obj, old, version.schema, causes, warnings))
    if causes:
        name = metadata.get("name") or metadata.get("generateName", "")
        raise errors.invalid(
            resource.kind,
            resource.group,
            str(name),
            [errors.StatusCause(c.reason, c.message, c.field) for c in causes],
        )


def _refuse_undecodable(
    causes: list[Cause], resource: ResourceType, version: VersionType, obj: Object | None = None
) -> None:
    """Given causes found (callers ask only then): a 400 "cannot be handled" for a value Go would not
    decode (``obj``: a built-in kind's body, whose Go structs are known), or for the values of the wrong
    JSON type among ``causes``; only a request that fails anyway is walked for Go's error (the schema
    refuses a value of the wrong JSON type too), so that a valid write pays nothing for it."""
    detail = None
    if obj is not None:
        detail = decode_error(obj, version.schema, resource.kind, version.name, resource.go_types)
    undecodable = [c for c in causes if c.reason == "FieldValueTypeInvalid"]
    if detail is None and undecodable:
        detail = "; ".join(f"{c.field}: {c.message}" for c in undecodable)
    if detail is not None:
        raise cannot_handle(resource, version, detail)
