"""From request bytes to an object of the addressed kind: parse (JSON, YAML, protobuf), check apiVersion/kind
and the shape of metadata, read ``fieldValidation``. What the object then goes through (pruning, defaulting,
admission, validation) is the registry's, for every writer alike (``registry.admit``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from apiserver.encoding import kubeyaml, limits, protobuf
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.admit import cannot_handle

JSON_TYPES = ("", "application/json", "*/*")
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
BODY_TYPES = ["application/json", "application/yaml"]


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
        return cannot_handle(self.resource, self.version, detail)


def parse_body(body: bytes, content_type: str, target: Target) -> Any:
    """Parse a JSON, YAML or (for kinds with a protobuf codec: the built-in kinds kubectl 1.32+ sends so)
    protobuf body; anything else the client sent is 415, unreadable bytes 400."""
    try:
        if content_type in JSON_TYPES:
            return limits.load_json(body)
        if content_type in YAML_TYPES:
            return kubeyaml.load_body(body)
        if content_type == protobuf.CONTENT_TYPE and target.version.protobuf is not None:
            return _protobuf_body(body, target, target.version.protobuf.message)
    except protobuf.UnsupportedKindError:
        raise errors.unsupported_media_type(BODY_TYPES) from None
    except (orjson.JSONDecodeError, yaml.YAMLError, protobuf.ProtobufError) as error:
        raise target.cannot_handle(str(error).splitlines()[0]) from None
    except limits.DecodedTooLarge as error:
        raise errors.request_entity_too_large(error.message) from None
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
    expected = target.api_version
    if target.resource.builtin:
        # kube decodes built-in kinds with the endpoint's kind and version as defaults (gvkWithDefaults)
        obj.setdefault("kind", target.resource.kind)
        obj.setdefault("apiVersion", expected)
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not kind:
        raise errors.bad_request("Object 'Kind' is missing in the request body")
    if kind != target.resource.kind or (api_version and api_version != expected):
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({expected})"
            if kind == target.resource.kind
            else f"the kind in the data ({kind}) does not match the expected kind ({target.resource.kind})"
        )
    obj["apiVersion"] = expected
    object_meta(obj, target)
    return obj


def object_meta(obj: Object, target: Target) -> Object:
    """``obj``'s metadata, created empty when missing; 400 when it is not an object."""
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    if not isinstance(metadata, dict):
        raise target.cannot_handle("metadata must be an object")
    for field in _INT64_FIELDS:
        value = metadata.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool) and not _is_int64(value):
            if not target.resource.builtin:
                # a custom resource's metadata is read with DropMalformedFields (apiextensions-apiserver
                # pkg/apiserver/schema/objectmeta, GetObjectMetaWithOptions): the value is dropped
                del metadata[field]
                continue
            # encoding/json's UnmarshalTypeError as kube's decoder wraps it (transformDecodeError)
            raise target.cannot_handle(
                f"json: cannot unmarshal number {_number_text(value)} into Go struct field "
                f"ObjectMeta.metadata.{field} of type int64"
            )
    return metadata


_INT64_FIELDS = ("generation", "deletionGracePeriodSeconds")
"""ObjectMeta's integers that a body may carry (Go int64s)."""


def _is_int64(value: int | float) -> bool:
    return isinstance(value, int) and -(2**63) <= value < 2**63


def _number_text(value: int | float) -> str:
    """The JSON number as the body wrote it, as far as a parsed value tells (integers beyond 64 bits are
    parsed as floats: their integral value is shown)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
