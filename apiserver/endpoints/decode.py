"""From request bytes to a checked internal object: parse, check apiVersion/kind, prune unknown fields per
``fieldValidation``, default, validate, convert to the hub.

This is the one place a write's body is judged, so create, update and every patch type share its errors:
400 for bodies that cannot be read or carry unknown fields under Strict, 422 for schema violations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from apiserver.encoding import kubeyaml, protobuf
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.schema import Cause, prune, prune_nulls, validate_object_meta
from apiserver.schema.cel import validate_rules
from apiserver.schema.ratchet import ratchet

JSON_TYPES = ("", "application/json", "*/*")
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
BODY_TYPES = ["application/json", "application/yaml"]
FIELD_VALIDATION = ("Strict", "Warn", "Ignore")


@dataclass(frozen=True, slots=True)
class Target:
    """What a write addresses: the resource, the version it is spoken in, and where."""

    resource: ResourceType
    version: VersionType
    namespace: str | None
    name: str = ""

    @property
    def api_version(self) -> str:
        return self.resource.api_version(self.version.name)

    def cannot_handle(self, detail: str) -> errors.APIError:
        kind = self.resource.kind
        return errors.bad_request(
            f'{kind} in version "{self.version.name}" cannot be handled as a {kind}: {detail}'
        )


def parse_body(body: bytes, content_type: str, target: Target) -> Any:
    """Parse a JSON, YAML or (for kinds with a protobuf codec: the built-in kinds kubectl 1.32+ sends so)
    protobuf body; anything else the client sent is 415, unreadable bytes 400."""
    try:
        if content_type in JSON_TYPES:
            return orjson.loads(body)
        if content_type in YAML_TYPES:
            return kubeyaml.load_body(body)
        if content_type == protobuf.CONTENT_TYPE and target.version.protobuf is not None:
            return _protobuf_body(body, target, target.version.protobuf.message)
    except protobuf.UnsupportedKindError:
        raise errors.unsupported_media_type(BODY_TYPES) from None
    except (orjson.JSONDecodeError, yaml.YAMLError, protobuf.ProtobufError) as error:
        raise target.cannot_handle(str(error).splitlines()[0]) from None
    # custom resources read no protobuf, as kube's custom resource handler
    raise errors.unsupported_media_type(BODY_TYPES)


def _protobuf_body(body: bytes, target: Target, message: protobuf.Message) -> Object:
    """The envelope's kind decoded with the target's codec; another kind or version (which the target's codec
    cannot read) comes back as its bare type, for check_type_meta to refuse as it refuses such a JSON body.
    An envelope without apiVersion or kind takes the endpoint's, as kube's gvkWithDefaults does."""
    unknown = protobuf.decode_envelope(body)
    api_version = unknown.api_version or target.api_version
    kind = unknown.kind or target.resource.kind
    if (api_version, kind) != (target.api_version, target.resource.kind):
        return {"apiVersion": api_version, "kind": kind}
    return {
        "kind": kind,
        "apiVersion": api_version,
        **protobuf.decode_message(message, unknown.raw),
    }


def check_type_meta(obj: Any, target: Target) -> Object:
    """The body as an object of the target's kind, its apiVersion the target's; raises 400 otherwise.

    A metadata that is not an object is refused here already (kube cannot decode such a body either), because
    the endpoints read the body's name and namespace before admission."""
    if not isinstance(obj, dict):
        raise target.cannot_handle("the body must be a JSON object")
    if target.resource.builtin:
        # kube decodes built-in kinds with the endpoint's kind and version as defaults (gvkWithDefaults)
        obj.setdefault("kind", target.resource.kind)
        obj.setdefault("apiVersion", target.api_version)
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not kind:
        raise errors.bad_request("Object 'Kind' is missing in the request body")
    if kind != target.resource.kind or (api_version and api_version != target.api_version):
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({target.api_version})"
            if kind == target.resource.kind
            else f"the kind in the data ({kind}) does not match the expected kind ({target.resource.kind})"
        )
    obj["apiVersion"] = target.api_version
    object_meta(obj, target)
    return obj


def object_meta(obj: Object, target: Target) -> Object:
    """``obj``'s metadata, created empty when missing; 400 when it is not an object."""
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    if not isinstance(metadata, dict):
        raise target.cannot_handle("metadata must be an object")
    return metadata


def field_validation(query: dict[str, str]) -> str:
    mode = query.get("fieldValidation", "Warn") or "Warn"
    if mode not in FIELD_VALIDATION:
        raise errors.bad_request(
            f"fieldValidation must be one of Strict, Warn, Ignore (or empty), got {mode!r}"
        )
    return mode


def admit(
    obj: Object,
    target: Target,
    mode: str,
    warnings: list[str],
    *,
    creating: bool,
    track: Callable[[Object], None] | None = None,
    old: Object | None = None,
) -> Object:
    """Prune, default and validate a versioned object, then convert it to the internal version.

    ``track`` records field ownership (managedFields) on the final versioned object: after defaulting, so
    defaults belong to the writer, as kube's field manager sees them. ``old`` is the stored object in the
    same version on an update: what a custom resource's transition rules (``oldSelf``) compare against.
    """
    metadata = object_meta(obj, target)
    unknown = prune(obj, target.version.schema)
    if unknown and mode == "Strict":
        detail = ", ".join(f'unknown field "{path}"' for path in unknown)
        raise target.cannot_handle(f"strict decoding error: {detail}")
    if unknown and mode == "Warn":
        warnings.extend(f'unknown field "{path}"' for path in unknown)
    prune_nulls(
        obj, target.version.schema
    )  # kube drops nulls of non-nullable fields without defaults
    if target.version.defaulter is not None:
        target.version.defaulter(obj)
    if target.resource.namespaced and target.namespace is not None:
        # the URL's namespace (a different one in the body was refused)
        metadata["namespace"] = target.namespace
    else:
        # kube clears it for cluster-scoped kinds (rest.BeforeCreate)
        metadata.pop("namespace", None)
    if not creating and not metadata.get("name"):
        metadata["name"] = target.name
    name = metadata.get("name") or metadata.get("generateName", "")
    causes = (
        validate_object_meta(metadata, target.resource.namespaced)
        if target.resource.persisted
        else []
    )
    # kube decodes ObjectMeta into Go types before any validation: a wrong JSON type there is a 400
    _refuse_undecodable(causes, target)
    if target.version.validator is not None:
        schema_causes = target.version.validator(obj)
        if target.resource.builtin:
            # kube decodes a built-in kind's body into its Go struct first: a value of the wrong JSON type
            # anywhere is a 400 there, before any validation (transformDecodeError in
            # k8s.io/apiserver/pkg/endpoints/handlers); a custom resource's is a 422 schema error
            _refuse_undecodable(schema_causes, target)
        else:  # an update may keep what a stricter schema now refuses (validation ratcheting)
            schema_causes = ratchet(schema_causes, obj, old, target.version.schema)
        causes.extend(schema_causes)
    if not target.resource.builtin:  # kube evaluates x-kubernetes-validations of custom resources
        causes.extend(validate_rules(obj, old, target.version.schema, causes, warnings))
    if causes:
        raise errors.invalid(
            target.resource.kind,
            target.resource.group,
            str(name),
            [errors.StatusCause(c.reason, c.message, c.field) for c in causes],
        )
    if track is not None:
        track(obj)
    return target.version.to_internal(obj)


def _refuse_undecodable(causes: list[Cause], target: Target) -> None:
    """A 400 "cannot be handled" for the values of the wrong JSON type among ``causes``, if any."""
    undecodable = [c for c in causes if c.reason == "FieldValueTypeInvalid"]
    if undecodable:
        raise target.cannot_handle("; ".join(f"{c.field}: {c.message}" for c in undecodable))
