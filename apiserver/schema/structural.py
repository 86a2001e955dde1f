"""A CRD ``openAPIV3Schema`` compiled once into a tree the per-request algorithms walk quickly.

This is the analog of k8s.io/apiextensions-apiserver/pkg/apiserver/schema/structural.go and convert.go
(``NewStructural``), merged with the parts of kube-openapi's ``spec.Schema`` that validation reads. Every
write runs pruning, defaulting and validation, so the work that depends only on the schema happens here,
once: patterns are compiled, formats normalised the way the apiserver strips unsupported ones, and each
node records whether anything below it has defaults, list-type invariants or embedded resources, so the
algorithms never descend into parts with nothing to do.

Schemas are treated as immutable: :func:`compile_schema` caches by object identity.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from apiserver.schema.formats import is_known_format
from apiserver.schema.regex import compile_go_regexp

__all__ = ["MISSING", "Schema", "compile_schema"]


class _Missing:
    """The absence of a ``default`` (``None`` is a valid default: JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

_CACHE_SIZE: Final = 512
_cache: OrderedDict[int, tuple[Mapping[str, Any], Schema]] = OrderedDict()
_last: tuple[Mapping[str, Any], Schema] | None = None
"""The entry asked for last, found without the LRU's reordering."""

# Formats the apiserver validates for CRDs, by schema type (apiextensions-apiserver
# pkg/apiserver/validation/formats.go); any other format, numeric ones too, is stripped and never checked. String formats
# are compared after go-openapi's normalisation, which drops dashes ("date-time" is "datetime").
_STRING_FORMATS: Final = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "quantity",
        "k8sshortname",
        "k8slongname",
    }
)
# The Python types of decoded JSON whose JSON type is the schema type (ints are "number"s too).
_PYTHON_TYPES: Final[dict[str, frozenset[type]]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "object": frozenset({dict}),
    "array": frozenset({list}),
}


def _supported_format(fmt: str) -> str:
    """``StripUnsupportedFormatsPostProcessorForVersion``: the format kept after stripping, whatever the
    schema's type. Numeric formats (``int32``, ``int64``, ``float``, ``double``) are never kept, so a
    number beyond int64 in an ``int32`` field is "must be of type integer: "number"", as kube says."""
    return fmt if fmt and fmt.replace("-", "") in _STRING_FORMATS else ""


def _number(raw: Mapping[str, Any], key: str) -> float | int | None:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _count(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


class Schema:
    """One compiled schema node. Attribute names follow the OpenAPI keywords they come from."""

    __slots__ = (
        "accepts",
        "additional_properties",
        "additional_properties_allowed",
        "all_of",
        "any_of",
        "cel_retyping",
        "cel_rules",
        "checks_format",
        "checks_numbers",
        "checks_object",
        "checks_slice",
        "checks_strings",
        "checks_type",
        "composed",
        "default",
        "embedded_resource",
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "format",
        "go_integer",
        "has_defaults_below",
        "has_embedded_below",
        "has_list_types_below",
        "has_rules",
        "has_rules_below",
        "int_or_string",
        "items",
        "list_map_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "not_",
        "null_pruner",
        "nullable",
        "one_of",
        "pattern",
        "pattern_source",
        "preserve_unknown_fields",
        "properties",
        "properties_with_defaults",
        "prune_check",
        "python_types",
        "raw",
        "required",
        "types",
        "unique_items",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.int_or_string: bool = raw.get("x-kubernetes-int-or-string") is True
        declared = raw.get("type")
        if self.int_or_string:
            # ConvertJSONSchemaProps turns int-or-string into the type list [integer, string].
            self.types: tuple[str, ...] = ("integer", "string")
        elif isinstance(declared, str) and declared:
            self.types = (declared,)
        else:
            self.types = ()
        self.nullable: bool = raw.get("nullable") is True
        fmt = raw.get("format")
        self.format: str = _supported_format(fmt if isinstance(fmt, str) else "")
        self.go_integer: str = fmt if fmt in ("int32", "int64") else ""
        """An integer field's Go type as its format declares it: what a built-in kind decodes it into."""
        self.default: Any = raw.get("default", MISSING)

        enum = raw.get("enum")
        self.enum: list[Any] | None = list(enum) if isinstance(enum, list) and enum else None
        pattern = raw.get("pattern")
        self.pattern_source: str = pattern if isinstance(pattern, str) else ""
        self.pattern: re.Pattern[str] | str | None = (
            compile_go_regexp(self.pattern_source) if self.pattern_source else None
        )
        self.maximum = _number(raw, "maximum")
        self.minimum = _number(raw, "minimum")
        self.exclusive_maximum: bool = raw.get("exclusiveMaximum") is True
        self.exclusive_minimum: bool = raw.get("exclusiveMinimum") is True
        self.multiple_of = _number(raw, "multipleOf")
        self.max_length = _count(raw, "maxLength")
        self.min_length = _count(raw, "minLength")
        self.max_items = _count(raw, "maxItems")
        self.min_items = _count(raw, "minItems")
        self.unique_items: bool = raw.get("uniqueItems") is True
        self.max_properties = _count(raw, "maxProperties")
        self.min_properties = _count(raw, "minProperties")
        required = raw.get("required")
        self.required: tuple[str, ...] = (
            tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else ()
        )

        props = raw.get("properties")
        self.properties: dict[str, Schema] = (
            {k: Schema(v) for k, v in props.items() if isinstance(v, Mapping)}
            if isinstance(props, Mapping)
            else {}
        )
        additional = raw.get("additionalProperties")
        # additionalProperties: <schema> | true | false; ``true`` allows anything without a schema.
        self.additional_properties: Schema | None = (
            Schema(additional) if isinstance(additional, Mapping) else None
        )
        self.additional_properties_allowed: bool | None = (
            True
            if isinstance(additional, Mapping)
            else additional
            if isinstance(additional, bool)
            else None
        )
        items = raw.get("items")
        self.items: Schema | None = Schema(items) if isinstance(items, Mapping) else None
        self.all_of: tuple[Schema, ...] = self._clauses(raw.get("allOf"))
        self.any_of: tuple[Schema, ...] = self._clauses(raw.get("anyOf"))
        self.one_of: tuple[Schema, ...] = self._clauses(raw.get("oneOf"))
        not_ = raw.get("not")
        self.not_: Schema | None = Schema(not_) if isinstance(not_, Mapping) else None

        self.preserve_unknown_fields: bool = raw.get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded_resource: bool = raw.get("x-kubernetes-embedded-resource") is True
        list_type = raw.get("x-kubernetes-list-type")
        self.list_type: str | None = list_type if list_type in ("set", "map") else None
        keys = raw.get("x-kubernetes-list-map-keys")
        self.list_map_keys: tuple[str, ...] = (
            tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
        )

        children = [*self.properties.values(), self.additional_properties, self.items]
        self.properties_with_defaults: tuple[tuple[str, Schema], ...] = tuple(
            (k, p) for k, p in self.properties.items() if p.default is not MISSING
        )
        self.has_defaults_below: bool = any(
            c is not None and (c.default is not MISSING or c.has_defaults_below) for c in children
        )
        self.has_list_types_below: bool = any(
            c is not None and (c.list_type is not None or c.has_list_types_below) for c in children
        )
        self.has_embedded_below: bool = any(
            c is not None and (c.embedded_resource or c.has_embedded_below) for c in children
        )
        rules = raw.get("x-kubernetes-validations")
        self.has_rules: bool = isinstance(rules, list) and bool(rules)
        self.has_rules_below: bool = any(
            c is not None and (c.has_rules or c.has_rules_below) for c in children
        )
        self.cel_rules: Any = None
        """The compiled ``x-kubernetes-validations``, filled in by apiserver.schema.cel when first used."""
        self.cel_retyping: bool | None = None
        """Whether CEL sees values below differently from their JSON (apiserver.schema.cel, when used)."""
        self.prune_check: Any = None
        """Whether pruning would remove nothing, compiled by apiserver.schema.prunecheck when first used."""
        self.accepts: Any = None
        """Whether a value passes validation, compiled by apiserver.schema.acceptance when first used."""
        self.null_pruner: Any = None
        """The drop of disallowed nulls, compiled by apiserver.schema.defaulting when first used."""

        self.checks_type: bool = bool(self.types or self.format)
        self.python_types: frozenset[type] = frozenset().union(
            *(_PYTHON_TYPES.get(t, frozenset()) for t in self.types)
        )
        self.composed: bool = bool(
            self.all_of or self.any_of or self.one_of or self.not_ is not None
        )
        self.checks_strings: bool = (
            self.max_length is not None or self.min_length is not None or self.pattern is not None
        )
        self.checks_format: bool = bool(self.format) and is_known_format(self.format)
        self.checks_numbers: bool = (
            self.multiple_of is not None or self.minimum is not None or self.maximum is not None
        )
        self.checks_slice: bool = (
            self.items is not None
            or self.min_items is not None
            or self.max_items is not None
            or self.unique_items
        )
        self.checks_object: bool = bool(
            self.properties
            or self.additional_properties is not None
            or self.additional_properties_allowed is False
            or self.required
            or self.min_properties is not None
            or self.max_properties is not None
        )

    @staticmethod
    def _clauses(value: Any) -> tuple[Schema, ...]:
        if not isinstance(value, list):
            return ()
        return tuple(Schema(v) for v in value if isinstance(v, Mapping))

    def field_schema(self, key: str) -> Schema | None:
        """The schema of member ``key`` of an object: a declared property, else additionalProperties."""
        prop = self.properties.get(key)
        return prop if prop is not None else self.additional_properties

    def __repr__(self) -> str:
        return f"Schema({dict(self.raw)!r})"


def compile_schema(schema: Mapping[str, Any] | Schema) -> Schema:
    """Compile ``schema`` (the whole ``openAPIV3Schema``), reusing the result for the same object.

    The cache keys on identity and keeps the schema alive, so a key can't be reused by another object;
    it is bounded so that schemas replaced at run time (CRD updates) are eventually dropped.
    """
    global _last
    if isinstance(schema, Schema):
        return schema
    if _last is not None and _last[0] is schema:  # a write asks for its own several times
        return _last[1]
    key = id(schema)
    hit = _cache.get(key)
    if hit is not None and hit[0] is schema:
        _cache.move_to_end(key)
        _last = hit
        return hit[1]
    compiled = Schema(schema)
    _last = _cache[key] = (schema, compiled)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return compiled
