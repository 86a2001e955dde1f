"""Expansion of the compact format's field specs into the full ``openAPIV3Schema`` a CRD would hold.

Users write ``replicas: int32`` or ``conditions: "[]Condition"``; everything after loading sees only the CRD
form, so a compact definition and an equivalent CRD manifest are indistinguishable to check, plan and emit.
Each produced schema node is reported to a ``record`` callback with the file path it came from, which is how an
error found later in an expanded schema still points at the line the user wrote.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from generator.definition import JsonPath, ProtobufTag
from generator.load_protobuf import read_protobuf_tag
from generator.load_reader import DocumentReader, describe, did_you_mean
from generator.schema_keywords import (
    COMPACT_KEYWORDS,
    KUBERNETES_EXTENSIONS,
    PATCH_EXTENSIONS,
    check_keyword_value,
)

COMPACT_EXTENSIONS = KUBERNETES_EXTENSIONS | PATCH_EXTENSIONS

__all__ = ["CONDITION", "QUANTITY_PATTERN", "TYPE_EXPRESSIONS", "SchemaExpander", "is_full_form"]

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""resource.Quantity's serialization, as controller-gen renders it for CRDs."""

_INT_OR_STRING: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}

CONDITION: dict[str, Any] = {
    # Descriptions: the Kubernetes OpenAPI (io.k8s.apimachinery.pkg.apis.meta.v1.Condition); patterns, lengths
    # and the status enum: the +kubebuilder markers on metav1.Condition, as controller-gen renders them.
    "type": "object",
    "description": "Condition contains details for one aspect of the current state of this API Resource.",
    "properties": {
        "type": {
            "type": "string",
            "description": "type of condition in CamelCase or in foo.example.com/CamelCase.",
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
        "status": {
            "type": "string",
            "description": "status of the condition, one of True, False, Unknown.",
            "enum": ["True", "False", "Unknown"],
        },
        "observedGeneration": {
            "type": "integer",
            "format": "int64",
            "description": "observedGeneration represents the .metadata.generation that the condition was set "
            "based upon. For instance, if .metadata.generation is currently 12, but the "
            ".status.conditions[x].observedGeneration is 9, the condition is out of date with respect to the "
            "current state of the instance.",
            "minimum": 0,
        },
        "lastTransitionTime": {
            "type": "string",
            "format": "date-time",
            "description": "lastTransitionTime is the last time the condition transitioned from one status to "
            "another. This should be when the underlying condition changed.  If that is not known, then using "
            "the time when the API field changed is acceptable.",
        },
        "reason": {
            "type": "string",
            "description": "reason contains a programmatic identifier indicating the reason for the condition's "
            "last transition. Producers of specific condition types may define expected values and meanings "
            "for this field, and whether the values are considered a guaranteed API. The value should be a "
            "CamelCase string. This field may not be empty.",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "message": {
            "type": "string",
            "description": "message is a human readable message indicating details about the transition. This "
            "may be an empty string.",
            "maxLength": 32768,
        },
    },
    "required": ["type", "status", "lastTransitionTime", "reason", "message"],
}
"""The standard metav1.Condition object, for ``Condition`` and ``[]Condition``."""

TYPE_EXPRESSIONS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "number": {"type": "number"},
    "float": {"type": "number", "format": "float"},
    "double": {"type": "number", "format": "double"},
    "boolean": {"type": "boolean"},
    "date-time": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "byte": {"type": "string", "format": "byte"},
    "int-or-string": _INT_OR_STRING,
    "quantity": {**_INT_OR_STRING, "pattern": QUANTITY_PATTERN},
    "any": {"x-kubernetes-preserve-unknown-fields": True},
    "object": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "Condition": CONDITION,
}
"""Named type expressions → the schema each stands for (``[]T`` and ``map[string]T`` compose them)."""

_EXPECTED_TYPES = ", ".join([*TYPE_EXPRESSIONS, "[]T", "map[string]T"])
_IMPLICIT_FIELDS = ("apiVersion", "kind", "metadata")
_MAP_TYPE = re.compile(r"map\[\s*([^\]]*?)\s*\]\s*(.*)", re.DOTALL)

Record = Callable[[JsonPath, JsonPath], None]
"""Called with (path inside the produced schema, path in the file it came from) for every schema node."""


_NAMED_MESSAGES = {"Condition": "Condition", "quantity": "Quantity"}
"""Type expressions that stand for a shared meta/v1 protobuf message (their schema alone cannot say so)."""


def is_full_form(spec: dict[str, Any]) -> bool:
    """A mapping describes one field (rather than an object's properties) when it has ``type`` and only keywords
    (and ``protobuf``, the field's number)."""
    return "type" in spec and all(
        key in COMPACT_KEYWORDS or key == "protobuf" or key.startswith("x-kubernetes-")
        for key in spec
    )


@dataclass(frozen=True)
class Hint:
    """Why a mapping that may have been meant as one field was read as an object, added to an error on one of
    its keys. ``typo`` is the misspelt keyword that made it so, when the error is on another key: that error
    is a consequence, listed right after the typo's own (the typo is what the user must fix)."""

    text: str = ""
    typo: str = ""


def _misspelt_keywords(spec: dict[str, Any]) -> dict[str, str]:
    """The keys of a mapping with ``type`` that look like misspelt keywords, each with the keyword meant."""
    if "type" not in spec:
        return {}
    found = {
        key: did_you_mean(key, COMPACT_KEYWORDS)
        for key in spec
        if key not in COMPACT_KEYWORDS and key != "protobuf" and not key.startswith("x-kubernetes-")
    }
    return {key: keyword for key, keyword in found.items() if keyword and keyword not in spec}


def _shorthand_hint(spec: dict[str, Any], key: str) -> Hint:
    """The hint for an error on ``key`` of ``spec`` (see Hint)."""
    if "type" not in spec and key in COMPACT_KEYWORDS:
        return Hint(
            f'; this mapping has no "type" key, so "{key}" was read as a property name '
            '(add "type" to describe a single field)'
        )
    typos = _misspelt_keywords(spec)
    if not typos:
        return Hint()
    typo = key if key in typos else next(iter(typos))
    return Hint(
        f'; "{typo}" is not a schema keyword (did you mean "{typos[typo]}"?), so this mapping was read as an '
        f"object with properties {', '.join(spec)}",
        "" if typo == key else typo,
    )


class SchemaExpander:
    """Expands one version's compact ``schema`` mapping; errors go to the reader, node origins to ``record``."""

    def __init__(
        self,
        reader: DocumentReader,
        record: Record,
        protobuf: dict[JsonPath, ProtobufTag] | None = None,
    ) -> None:
        self.reader = reader
        self.record = record
        self.protobuf: dict[JsonPath, ProtobufTag] = {} if protobuf is None else protobuf
        """The ``protobuf`` tags met, by produced schema path (shared messages included)."""

    def root(self, fields: Any, src: JsonPath, description: str) -> dict[str, Any]:
        """The whole object's schema: implicit apiVersion/kind/metadata plus the declared top-level fields."""
        self.record((), src)
        properties: dict[str, Any] = {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
        }
        for name in _IMPLICIT_FIELDS:
            self.record(("properties", name), src)
        required: list[str] = []
        mapping = self.reader.mapping(fields, src) or {}
        for name, spec in mapping.items():
            if name in _IMPLICIT_FIELDS:
                self.reader.error(
                    (*src, name),
                    f'"{name}" is implicit in every object; declare only the other top-level fields '
                    "(spec, status, ...)",
                )
                continue
            schema, is_required = self.field(
                spec,
                (*src, name),
                ("properties", name),
                in_object=True,
                hint=_shorthand_hint(mapping, name),
            )
            if schema is not None:
                properties[name] = schema
            if is_required:
                required.append(name)
        root: dict[str, Any] = {"type": "object"}
        if description:
            root["description"] = description
        root["properties"] = properties
        if required:
            root["required"] = required
        return root

    def field(
        self, spec: Any, src: JsonPath, dst: JsonPath, *, in_object: bool, hint: Hint = Hint()
    ) -> tuple[dict[str, Any] | None, bool]:
        """One field spec → (its schema or None on error, whether it said ``required: true``)."""
        self.record(dst, src)
        if isinstance(spec, str):
            return self.expression(spec, src, dst, hint), False
        if isinstance(spec, dict):
            if is_full_form(spec):
                return self._full_form(spec, src, dst, in_object)
            typos = _misspelt_keywords(spec)
            if (
                typos
            ):  # one field with a misspelt keyword, not an object whose properties are all wrong
                for typo, keyword in typos.items():
                    self.reader.error(
                        (*src, typo), f'unknown schema keyword "{typo}"; did you mean "{keyword}"?'
                    )
                return None, False
            return self._shorthand(spec, src, dst), False
        self._error(src, f"expected a type expression or a mapping, got {describe(spec)}", hint)
        return None, False

    def _error(self, src: JsonPath, message: str, hint: Hint) -> None:
        cause = (*src[:-1], hint.typo) if hint.typo else None
        self.reader.error(src, message + hint.text, cause=cause)

    def expression(
        self, text: str, src: JsonPath, dst: JsonPath, hint: Hint = Hint()
    ) -> dict[str, Any] | None:
        """A type expression (``int32``, ``[]string``, ``map[string][]Condition``) → its schema."""
        self.record(dst, src)
        expr = text.strip()
        if expr.startswith("[]"):
            element = expr[2:].strip()
            items = self.expression(element, src, (*dst, "items"))
            if items is None:
                return None
            schema: dict[str, Any] = {"type": "array", "items": items}
            if element == "Condition":
                schema["x-kubernetes-list-type"] = "map"
                schema["x-kubernetes-list-map-keys"] = ["type"]
            return schema
        if expr.startswith("map["):
            match = _MAP_TYPE.fullmatch(expr)
            if match is None or not match.group(2):
                self.reader.error(src, f'malformed map type "{expr}"; expected map[string]T')
                return None
            if match.group(1) != "string":
                self.reader.error(
                    src,
                    f'map keys must be strings (JSON object keys are), got "{expr}"; use map[string]T',
                )
                return None
            values = self.expression(match.group(2), src, (*dst, "additionalProperties"))
            return None if values is None else {"type": "object", "additionalProperties": values}
        if expr in TYPE_EXPRESSIONS:
            if expr in _NAMED_MESSAGES:
                self.protobuf[dst] = ProtobufTag(message=_NAMED_MESSAGES[expr])
            return copy.deepcopy(TYPE_EXPRESSIONS[expr])
        message = f'unknown type "{expr}"; expected one of {_EXPECTED_TYPES}'
        suggestion = did_you_mean(expr, TYPE_EXPRESSIONS)
        if suggestion:
            message += f'; did you mean "{suggestion}"?'
        self._error(src, message, hint)
        return None

    def _shorthand(self, spec: dict[str, Any], src: JsonPath, dst: JsonPath) -> dict[str, Any]:
        """An object written as its properties: ``{image: string, replicas: int32}``."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, value in spec.items():
            schema, is_required = self.field(
                value,
                (*src, name),
                (*dst, "properties", name),
                in_object=True,
                hint=_shorthand_hint(spec, name),
            )
            if schema is not None:
                properties[name] = schema
            if is_required:
                required.append(name)
        out: dict[str, Any] = {"type": "object"}
        if properties:
            out["properties"] = properties
        if required:
            out["required"] = required
        return out

    def _full_form(
        self, spec: dict[str, Any], src: JsonPath, dst: JsonPath, in_object: bool
    ) -> tuple[dict[str, Any] | None, bool]:
        """``{type: <expression>, <keyword>: ...}``: the expression's schema with the keywords laid over it."""
        declared = spec["type"]
        if not isinstance(declared, str):
            self.reader.error(
                (*src, "type"), f"expected a type expression, got {describe(declared)}"
            )
            return None, False
        kind = declared.strip()
        structured = "properties" in spec or "additionalProperties" in spec
        if kind == "array":
            schema: dict[str, Any] = {"type": "array"}
            if "items" not in spec:
                self.reader.error(
                    (*src, "type"), 'type "array" needs "items" (or write the type as "[]T")'
                )
        elif kind == "object":
            schema = {"type": "object"} if structured else copy.deepcopy(TYPE_EXPRESSIONS["object"])
        else:
            expanded = self.expression(kind, (*src, "type"), dst)
            if expanded is None:
                return None, False
            # The node is the whole mapping; only what the type expression expands to comes from "type".
            self.record(dst, src)
            schema = expanded
            for key in ("items", "properties", "additionalProperties"):
                if key in spec:
                    wanted = "array" if key == "items" else "object"
                    self.reader.error(
                        (*src, key),
                        f'"{key}" needs type "{wanted}"; type "{kind}" already says what it holds',
                    )
        flagged: list[str] = []
        is_required = False
        for key, value in spec.items():
            here = (*src, key)
            if key == "type":
                continue
            if key in ("items", "additionalProperties"):
                if kind == ("array" if key == "items" else "object"):
                    schema[key] = self.field(value, here, (*dst, key), in_object=False)[0]
            elif key == "properties":
                if kind == "object":
                    schema["properties"] = self._properties(value, here, dst, flagged)
            elif key == "required":
                is_required = self._required(spec, value, here, in_object, schema)
            elif key == "protobuf":
                self._protobuf(value, here, dst, in_object)
            elif key.startswith("x-kubernetes-") and key not in COMPACT_EXTENSIONS:
                self.reader.unknown_key(here, key, COMPACT_EXTENSIONS)
            elif check_keyword_value(self.reader, key, value, here):
                schema[key] = copy.deepcopy(value)
        if flagged:
            listed = schema.get("required", [])
            schema["required"] = listed + [name for name in flagged if name not in listed]
        return schema, is_required

    def _protobuf(self, value: Any, src: JsonPath, dst: JsonPath, in_object: bool) -> None:
        """A field's ``protobuf`` tag, kept with what its type expression already said (a shared message)."""
        if not in_object:
            self.reader.error(
                src,
                "only object properties have protobuf numbers; list items and map values are numbered "
                "by their list or map",
            )
            return
        tag = read_protobuf_tag(self.reader, value, src)
        if tag is not None:
            named = self.protobuf.get(dst)
            self.protobuf[dst] = replace(
                tag, message=tag.message or (named.message if named else "")
            )

    def _properties(
        self, value: Any, src: JsonPath, dst: JsonPath, flagged: list[str]
    ) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for name, spec in (self.reader.mapping(value, src) or {}).items():
            schema, is_required = self.field(
                spec, (*src, name), (*dst, "properties", name), in_object=True
            )
            if schema is not None:
                properties[name] = schema
            if is_required:
                flagged.append(name)
        return properties

    def _required(
        self,
        spec: dict[str, Any],
        value: Any,
        src: JsonPath,
        in_object: bool,
        schema: dict[str, Any],
    ) -> bool:
        """``required: true|false`` marks this property; ``required: [names]`` lists this object's properties."""
        if isinstance(value, bool):
            if value and not in_object:
                self.reader.error(
                    src,
                    "required: true marks a property of an object; this field is not an object property",
                )
            return value and in_object
        if not isinstance(value, list):
            self.reader.error(
                src, f"expected a list of property names or true/false, got {describe(value)}"
            )
            return False
        names = list(self.reader.strings(value, src))
        if schema.get("type") != "object":
            self.reader.error(
                src, "a required list needs an object (a property list belongs to type: object)"
            )
            return False
        declared = spec.get("properties")
        if isinstance(declared, dict):
            for index, name in enumerate(names):
                if name not in declared:
                    self.reader.error((*src, index), f'"{name}" is not a property of this object')
        schema["required"] = names
        return False
