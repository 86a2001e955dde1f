"""The OpenAPI schema vocabulary both input formats accept, and the shape each keyword's value must have.

A CRD's ``openAPIV3Schema`` may use every JSONSchemaProps field of apiextensions.k8s.io/v1 (the checker then
rejects the ones a structural schema forbids, with apiextensions' reasons); the compact format's full-form
mappings use a smaller set. Value shapes are checked here, at load time, so that later stages can index a schema
without re-checking types.
"""

from __future__ import annotations

from typing import Any

from generator.definition import JsonPath
from generator.load_reader import DocumentReader, describe

__all__ = [
    "COMPACT_KEYWORDS",
    "JSON_SCHEMA_PROPS",
    "KUBERNETES_EXTENSIONS",
    "PATCH_EXTENSIONS",
    "check_keyword_value",
]

KUBERNETES_EXTENSIONS = frozenset(
    {
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)

PATCH_EXTENSIONS = frozenset({"x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy"})
"""Strategic-merge-patch metadata, as built-in kinds' OpenAPI carries it: allowed in the compact format (it
makes the server accept strategic merge patches for the kind), not in CRDs, whose JSONSchemaProps lack it."""

COMPACT_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "description",
        "default",
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "items",
        "properties",
        "additionalProperties",
        "required",
        "nullable",
        "example",
    }
)
"""Keywords of a compact full-form field spec (plus every ``x-kubernetes-*`` extension)."""

JSON_SCHEMA_PROPS = (
    COMPACT_KEYWORDS
    | KUBERNETES_EXTENSIONS
    | {
        "id",
        "$schema",
        "$ref",
        "title",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
        "externalDocs",
    }
)
"""Every field of apiextensions.k8s.io/v1 JSONSchemaProps."""

_STRINGS = {"format", "description", "pattern", "title", "id", "$schema", "$ref"}
_STRINGS |= {"x-kubernetes-list-type", "x-kubernetes-map-type"} | PATCH_EXTENSIONS
_BOOLEANS = {"exclusiveMinimum", "exclusiveMaximum", "uniqueItems", "nullable"}
_BOOLEANS |= {
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
}
_NUMBERS = {"minimum", "maximum", "multipleOf"}
_COUNTS = {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
_VALIDATION_RULE_KEYS = (
    "rule",
    "message",
    "messageExpression",
    "reason",
    "fieldPath",
    "optionalOldSelf",
)
_RULE_REASONS = (
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
)


def check_keyword_value(reader: DocumentReader, key: str, value: Any, path: JsonPath) -> bool:
    """Report a keyword value of the wrong shape (scalar keywords, enum, list-map keys, CEL rules)."""
    if key in _STRINGS:
        return reader.string(value, path) is not None
    if key in _BOOLEANS:
        return reader.boolean(value, path) is not None
    if key in _NUMBERS:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return True
        reader.error(path, f"expected a number, got {describe(value)}")
        return False
    if key in _COUNTS:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return True
        reader.error(path, f"expected a non-negative integer, got {describe(value)}")
        return False
    if key == "enum":
        return reader.sequence(value, path) is not None
    if key == "x-kubernetes-list-map-keys":
        items = reader.sequence(value, path)
        return items is not None and len(reader.strings(items, path)) == len(items)
    if key == "x-kubernetes-validations":
        return _check_validation_rules(reader, value, path)
    return True


def _check_validation_rules(reader: DocumentReader, value: Any, path: JsonPath) -> bool:
    rules = reader.sequence(value, path)
    if rules is None:
        return False
    ok = True
    for index, rule in enumerate(rules):
        here = (*path, index)
        entry = reader.mapping(rule, here, _VALIDATION_RULE_KEYS, required=("rule",))
        if entry is None:
            ok = False
            continue
        for key, item in entry.items():
            if key == "optionalOldSelf":
                ok = reader.boolean(item, (*here, key)) is not None and ok
            elif key == "reason":
                ok = reader.choice(item, (*here, key), _RULE_REASONS) is not None and ok
            elif key in _VALIDATION_RULE_KEYS:
                ok = reader.string(item, (*here, key)) is not None and ok
    return ok
