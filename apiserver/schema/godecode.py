"""The error kube's Go decoder gives a built-in kind's body with a value of the wrong JSON type.

kube decodes a built-in kind's body into its Go struct before anything validates it (encoding/json, in the
sigs.k8s.io/json fork), and the first value in the document that the Go field cannot hold ends the request
with a 400: ``json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type
[]v1.Container``. The message names the JSON value (``string``, ``number``, ``bool``, ``array``,
``object``; a number with its text when the field is an integer), the innermost Go struct being decoded,
the JSON names of the struct fields crossed from the root (list indices and map keys are not fields), and
the Go type of the value's field (Go's ``UnmarshalTypeError``, completed by ``addErrorContext``).

The Go types come from the kind's schema (``format: int32``, ``byte``, ``date-time``, int-or-string) and
the struct names from its definition's ``openapiTypes`` (kube-openapi publishes each Go struct as a
component named after it). Where a struct has no name there, None is returned: the caller then words the
error itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from apiserver.machinery.gojson import go_json_kind
from apiserver.schema.structural import Schema, compile_schema

__all__ = ["decode_error"]

_INTEGERS: Final = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_SKIPPED: Final = frozenset({"apiVersion", "kind"})
"""TypeMeta's fields, judged on their own (:mod:`apiserver.endpoints.decode`)."""
_STRING: Final = {"type": "string"}
_STRINGS: Final = {"type": "array", "items": _STRING}
_STRING_MAP: Final = {"type": "object", "additionalProperties": _STRING}
_TIME: Final = {"type": "string", "format": "date-time"}
_BOOL: Final = {"type": "boolean"}
_OBJECT_META: Final = {
    "type": "object",
    "properties": {
        **dict.fromkeys(
            ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"), _STRING
        ),
        "generation": {"type": "integer", "format": "int64"},
        "creationTimestamp": _TIME,
        "deletionTimestamp": _TIME,
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "ownerReferences": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    **dict.fromkeys(("apiVersion", "kind", "name", "uid"), _STRING),
                    **dict.fromkeys(("controller", "blockOwnerDeletion"), _BOOL),
                },
            },
        },
        "finalizers": _STRINGS,
        "managedFields": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    **dict.fromkeys(
                        ("manager", "operation", "apiVersion", "fieldsType", "subresource"), _STRING
                    ),
                    "time": _TIME,
                    "fieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            },
        },
    },
}
"""metav1.ObjectMeta as Go decodes it (k8s.io/apimachinery/pkg/apis/meta/v1/types.go)."""
_META_NAMES: Final = {
    "metadata": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "metadata.ownerReferences[]": "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    "metadata.managedFields[]": "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    "metadata.managedFields[].operation": "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsOperationType",
}


_META: Final = compile_schema(_OBJECT_META)


class _Unnamed(Exception):
    """A struct whose Go name the definition does not give."""


@dataclass(frozen=True, slots=True)
class _Place:
    """Where the decoder is: the schema path (``spec.ports[]``), the innermost struct's name and the JSON
    names of the struct fields crossed."""

    path: str
    struct: str
    fields: tuple[str, ...]


def decode_error(
    obj: Mapping[str, Any],
    schema: Mapping[str, Any],
    kind: str,
    package: str,
    structs: tuple[tuple[str, str], ...],
) -> str | None:
    """Go's error for the first value of ``obj`` its Go struct cannot hold (None: none, or a struct not
    named in ``structs``, the definition's ``openapiTypes``); ``package``: the Go package's name, the
    version (``v1``)."""
    names = {**dict(structs), **_META_NAMES}
    root = compile_schema(schema)
    fields = (
        (value, _META if key == "metadata" else root.properties.get(key), _Place(key, kind, (key,)))
        for key, value in obj.items()
        if key not in _SKIPPED
    )
    try:
        return _first(fields, names, package)
    except _Unnamed:
        return None


Decoded = Iterable[tuple[Any, Schema | None, _Place]]
"""Values with their schemas and places, in document order."""


def _first(values: Decoded, names: dict[str, str], package: str) -> str | None:
    for value, s, at in values:
        found = None if s is None else _value(value, s, at, names, package)
        if found is not None:
            return found
    return None


def _value(value: Any, s: Schema, at: _Place, names: dict[str, str], package: str) -> str | None:
    if value is None or s.preserve_unknown_fields or s.embedded_resource:
        return None  # null leaves the field as it is; RawExtension and JSON take anything
    if s.int_or_string:  # intstr.IntOrString decodes a number into its int32
        return None if isinstance(value, str) else _integer(value, "int32", at)
    kind = s.types[0] if len(s.types) == 1 else ""
    container = {"object": dict, "array": list}.get(kind)
    if container is None:
        return _scalar(value, s, kind, at, names, package)
    if not isinstance(value, container):
        return _error(go_json_kind(value), _go_type(s, at.path, names, package), at)
    return _first(_members(value, s, at, names), names, package)


def _members(
    value: dict[str, Any] | list[Any], s: Schema, at: _Place, names: dict[str, str]
) -> Decoded:
    """A struct's fields (each a field of the path), a map's values or a list's items (the field stays
    the container's)."""
    if isinstance(value, list):
        place = _Place(f"{at.path}[]", at.struct, at.fields)
        yield from ((item, s.items, place) for item in value)
    elif s.properties:
        struct = _struct_name(at.path, names)
        for key, item in value.items():
            yield item, s.properties.get(key), _Place(f"{at.path}.{key}", struct, (*at.fields, key))
    else:
        yield from ((item, s.additional_properties, at) for item in value.values())


def _scalar(
    value: Any, s: Schema, kind: str, at: _Place, names: dict[str, str], package: str
) -> str | None:
    if kind == "string":
        if isinstance(value, str):
            return None  # []byte takes a base64 string, metav1.Time a string it then parses
        # metav1.Time's UnmarshalJSON decodes a string first: that string is the type refused
        time = s.raw.get("format") == "date-time"
        return _error(
            go_json_kind(value), "string" if time else _go_type(s, at.path, names, package), at
        )
    if kind == "boolean":
        return None if isinstance(value, bool) else _error(go_json_kind(value), "bool", at)
    if kind == "integer":
        return _integer(value, s.go_integer or "int64", at)
    if kind == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return None
        return _error(go_json_kind(value), "float64", at)
    return None


def _integer(value: Any, go_type: str, at: _Place) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _error(go_json_kind(value), go_type, at)
    low, high = _INTEGERS[go_type]
    if isinstance(value, int) and low <= value <= high:
        return None
    return _error(f"number {value}", go_type, at)  # Go shows the number's text


def _error(json_kind: str, go_type: str, at: _Place) -> str:
    return (
        f"json: cannot unmarshal {json_kind} into Go struct field {at.struct}."
        f"{'.'.join(at.fields)} of type {go_type}"
    )


def _struct_name(path: str, names: dict[str, str]) -> str:
    name = names.get(path)
    if name is None:
        raise _Unnamed(path)
    return name.rpartition(".")[2]


def _go_type(s: Schema, path: str, names: dict[str, str], package: str) -> str:
    """reflect.Type.String() of the field at ``path``: ``[]v1.ServicePort``, ``map[string]string``."""
    if s.int_or_string:
        return "intstr.IntOrString"
    kind = s.types[0] if len(s.types) == 1 else ""
    if kind == "object" and s.properties:
        named = _named(path, names, package)
        if not named:
            raise _Unnamed(path)
        return named
    if kind == "object":
        extra = s.additional_properties
        inner = "interface {}" if extra is None else _go_type(extra, path, names, package)
        return f"map[string]{inner}"
    if kind == "array":
        inner = (
            "interface {}" if s.items is None else _go_type(s.items, f"{path}[]", names, package)
        )
        return f"[]{inner}"
    if kind == "string":
        return _named(path, names, package) or _string_type(s)
    if kind == "integer":
        return s.go_integer or "int64"
    return {"boolean": "bool", "number": "float64"}.get(kind, "interface {}")


def _named(path: str, names: dict[str, str], package: str) -> str:
    """The Go type named at ``path`` with its package's name (``v1.ServicePort``), or ""."""
    name = names.get(path)
    if name is None:
        return ""
    qualifier, _, short = name.rpartition(".")
    return f"{qualifier.rpartition('.')[2] if qualifier else package}.{short}"


def _string_type(s: Schema) -> str:
    return {"byte": "[]uint8", "date-time": "v1.Time"}.get(str(s.raw.get("format") or ""), "string")
