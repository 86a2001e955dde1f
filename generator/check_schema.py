"""Structural-schema rules, as the apiextensions apiserver enforces them for a CRD's ``openAPIV3Schema``.

A generated kind and a CRD posted at run time must be judged alike, so these are apiextensions' own rules
(validation.go's ``ValidateCustomResourceDefinitionOpenAPISchema`` and the structural invariants of
``pkg/apiserver/schema``), with its reasons, applied at generation time: every field has a type unless it
preserves unknown fields or is int-or-string; no ``additionalProperties`` beside ``properties``; root metadata
restricts only name and generateName; value validations (allOf/anyOf/oneOf/not) add no structure; list and
map extensions are consistent; defaults are allowed where apiextensions allows them and valid against their
own schema. Defaults are judged by the runtime's own pruning, defaulting and validation (``apiserver.schema``),
exactly as apiextensions judges them, once the schema is known to be structural.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from apiserver.schema import apply_defaults, prune, validate
from apiserver.schema.causes import not_supported
from apiserver.schema.celstatic import rule_problems
from apiserver.schema.regex import compile_go_regexp
from generator.definition import JsonPath

__all__ = ["Report", "check_schema", "default_problems"]

Report = Callable[[JsonPath, str], None]
"""Called with (path inside the schema dict, message) for each problem found."""

TYPES = ("array", "boolean", "integer", "number", "object", "string")
_ROOT_KEYS = frozenset(
    {
        "description",
        "type",
        "format",
        "title",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "required",
        "items",
        "properties",
        "externalDocs",
        "example",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)
_UNSUPPORTED = ("id", "additionalItems", "patternProperties", "definitions", "dependencies", "$ref")
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_META_FIELDS = ("apiVersion", "kind", "metadata")

ROOT, ITEM, FIELD = "root", "item", "field"


def check_schema(schema: dict[str, Any], report: Report) -> None:
    """Report every structural-schema violation and invalid default of one version's schema."""
    problems = 0

    def counted(path: JsonPath, message: str) -> None:
        nonlocal problems
        problems += 1
        report(path, message)

    for key in schema:
        if key not in _ROOT_KEYS:
            counted((key,), f"{key} is not allowed at the root of a schema")
    _Structure(counted).node(schema, (), ROOT)
    # as in apiextensions: defaults, CEL rules and their costs are only judged on a structural schema
    if not problems:
        _check_defaults(schema, (), report, "")
        for path, message in rule_problems(schema):
            report(path, message)


def _is_puf(node: dict[str, Any]) -> bool:
    return node.get("x-kubernetes-preserve-unknown-fields") is True


class _Structure:
    def __init__(self, report: Report) -> None:
        self.report = report

    def node(self, s: Any, path: JsonPath, level: str) -> None:
        if not isinstance(s, dict):
            return
        report = self.report
        for key in _UNSUPPORTED:
            if key in s:
                report((*path, key), f"{key} is not supported")
        kind = s.get("type")
        if kind == "null":
            report((*path, "type"), "type cannot be null; use nullable: true")
        elif kind is not None and kind not in TYPES:
            # kube's apiextensions validation: field.NotSupported of the type
            report((*path, "type"), not_supported("", kind, TYPES).message)
        if s.get("uniqueItems") is True:
            report(
                (*path, "uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        self._shape(s, path, level)
        self._extensions(s, path)
        if level == ROOT or s.get("x-kubernetes-embedded-resource") is True:
            self._resource_meta(s, path, level)
        self._value_validations(s, path)
        items = s.get("items")
        if isinstance(items, dict):
            self.node(items, (*path, "items"), ITEM)
        for name, sub in (s.get("properties") or {}).items():
            self.node(sub, (*path, "properties", name), FIELD)
        if isinstance(s.get("additionalProperties"), dict):
            self.node(s["additionalProperties"], (*path, "additionalProperties"), FIELD)
        self._validation_rules(s, path)
        pattern = s.get("pattern")
        if isinstance(pattern, str):
            _check_pattern(pattern, (*path, "pattern"), report)

    def _shape(self, s: dict[str, Any], path: JsonPath, level: str) -> None:
        report = self.report
        kind = s.get("type")
        additional = s.get("additionalProperties")
        if s.get("properties") and (additional is False or isinstance(additional, dict)):
            report(
                (*path, "additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            )
        if additional is not None and level == ROOT:
            report((*path, "additionalProperties"), "must not be used at the root")
        items = s.get("items")
        if isinstance(items, list):
            report((*path, "items"), "items must be a schema object and not an array")
        elif kind == "array" and items is None:
            report((*path, "items"), "must be specified for type array")
        embedded = s.get("x-kubernetes-embedded-resource") is True
        if embedded and kind != "object":
            report((*path, "type"), "must be object if x-kubernetes-embedded-resource is true")
        elif not kind and s.get("x-kubernetes-int-or-string") is not True and not _is_puf(s):
            where = {ROOT: "at the root", ITEM: "for array items", FIELD: "for object fields"}[
                level
            ]
            report(
                (*path, "type"),
                f"type is required {where} (unless x-kubernetes-preserve-unknown-fields or "
                "x-kubernetes-int-or-string is true)",
            )
        if level == ROOT and kind and kind != "object":
            report((*path, "type"), "must be object at the root")
        if embedded and additional is not None:
            report(
                (*path, "additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        if embedded and not _is_puf(s) and not s.get("properties"):
            report(
                (*path, "properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )

    def _extensions(self, s: dict[str, Any], path: JsonPath) -> None:
        report = self.report
        kind = s.get("type")
        if s.get("x-kubernetes-preserve-unknown-fields") is False:
            report((*path, "x-kubernetes-preserve-unknown-fields"), "must be true or undefined")
        if s.get("x-kubernetes-int-or-string") is True:
            if _is_puf(s):
                report(
                    (*path, "x-kubernetes-preserve-unknown-fields"),
                    "must be false if x-kubernetes-int-or-string is true",
                )
            if s.get("x-kubernetes-embedded-resource") is True:
                report(
                    (*path, "x-kubernetes-embedded-resource"),
                    "must be false if x-kubernetes-int-or-string is true",
                )
        map_type = s.get("x-kubernetes-map-type")
        if map_type is not None:
            if kind != "object":
                report((*path, "type"), "must be object if x-kubernetes-map-type is specified")
            if map_type not in ("atomic", "granular"):
                report(
                    (*path, "x-kubernetes-map-type"),
                    f'unsupported value "{map_type}"; expected atomic or granular',
                )
        list_type = s.get("x-kubernetes-list-type")
        keys = s.get("x-kubernetes-list-map-keys") or []
        if list_type is not None:
            if kind != "array":
                report((*path, "type"), "must be array if x-kubernetes-list-type is specified")
            if list_type not in ("atomic", "set", "map"):
                report(
                    (*path, "x-kubernetes-list-type"),
                    f'unsupported value "{list_type}"; expected atomic, set or map',
                )
        if keys and list_type != "map":
            report(
                (*path, "x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )
        items = s.get("items")
        if (
            list_type in ("set", "map")
            and isinstance(items, dict)
            and items.get("nullable") is True
        ):
            report(
                (*path, "items", "nullable"),
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        if list_type == "map":
            self._list_map(s, path, keys)

    def _list_map(self, s: dict[str, Any], path: JsonPath, keys: list[Any]) -> None:
        report = self.report
        if not keys:
            report(
                (*path, "x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            )
        items = s.get("items")
        if not isinstance(items, dict):
            return
        if items.get("type") != "object":
            report(
                (*path, "items", "type"),
                "must be object if parent array's x-kubernetes-list-type is map",
            )
            return
        properties = items.get("properties") or {}
        required = items.get("required") or []
        if len(set(keys)) != len(keys):
            report((*path, "x-kubernetes-list-map-keys"), "must not contain duplicate entries")
        for key in keys:
            if key not in properties:
                report(
                    (*path, "x-kubernetes-list-map-keys"), f'"{key}" is not a property of the items'
                )
                continue
            prop = properties[key]
            here = (*path, "items", "properties", key)
            if prop.get("type") in ("array", "object"):
                report(
                    (*here, "type"),
                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                )
            if key not in required and "default" not in prop:
                report(
                    here,
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a "
                    "required property",
                )
            if prop.get("nullable") is True:
                report(
                    (*here, "nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )

    def _resource_meta(self, s: dict[str, Any], path: JsonPath, level: str) -> None:
        properties = s.get("properties") or {}
        for name in ("apiVersion", "kind"):
            if name in properties and properties[name].get("type") != "string":
                self.report((*path, "properties", name, "type"), "must be string")
        metadata = properties.get("metadata")
        if not isinstance(metadata, dict):
            return
        here = (*path, "properties", "metadata")
        if metadata.get("type") != "object":
            self.report((*here, "type"), "must be object")
        if level != ROOT:
            return
        names = set(metadata.get("properties") or {})
        extra = [key for key in metadata if key not in ("type", "properties", "default")]
        if extra or not names <= {"name", "generateName"}:
            self.report(here, "must not specify anything other than name and generateName")

    def _value_validations(self, s: dict[str, Any], path: JsonPath) -> None:
        skip_any_of = s.get("anyOf") == _INT_OR_STRING_ANY_OF
        all_of = s.get("allOf")
        skip_first_all_of = (
            isinstance(all_of, list)
            and bool(all_of)
            and (isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF)
        )
        for junctor in _JUNCTORS:
            if junctor == "anyOf" and skip_any_of:
                continue
            for index, sub in enumerate(s.get(junctor) or []):
                skip = junctor == "allOf" and index == 0 and skip_first_all_of
                self._nested(sub, s, (*path, junctor, index), skip)
        if isinstance(s.get("not"), dict):
            self._nested(s["not"], s, (*path, "not"), False)

    def _nested(
        self, v: Any, structural: dict[str, Any], path: JsonPath, skip_any_of: bool
    ) -> None:
        """A schema under allOf/anyOf/oneOf/not: it may only restrict values the structural part declares."""
        if not isinstance(v, dict):
            return
        report = self.report
        for key, reason in _NESTED_FORBIDDEN:
            # Zero values are what Go's structs hold when a key is absent, so apiextensions lets them pass.
            unset = v.get(key) is None or (key != "default" and v[key] in (False, "", []))
            if key in v and not unset:
                report((*path, key), reason)
        for junctor in _JUNCTORS:
            if junctor == "anyOf" and skip_any_of:
                continue
            for index, sub in enumerate(v.get(junctor) or []):
                self._nested(sub, structural, (*path, junctor, index), False)
        if isinstance(v.get("not"), dict):
            self._nested(v["not"], structural, (*path, "not"), False)
        declared = structural.get("properties") or {}
        for name, sub in (v.get("properties") or {}).items():
            if name == "metadata":
                report((*path, "properties", name), "must not be specified in a nested context")
            if name not in declared and not _is_puf(structural):
                report(
                    (*path, "properties", name),
                    f'"{name}" must also be declared in the structural schema (outside allOf/anyOf/oneOf/not)',
                )
            elif name in declared:
                self._nested(sub, declared[name], (*path, "properties", name), False)
        if isinstance(v.get("items"), dict):
            if not isinstance(structural.get("items"), dict):
                report((*path, "items"), "items must also be declared in the structural schema")
            else:
                self._nested(v["items"], structural["items"], (*path, "items"), False)

    def _validation_rules(self, s: dict[str, Any], path: JsonPath) -> None:
        for index, rule in enumerate(s.get("x-kubernetes-validations") or []):
            here = (*path, "x-kubernetes-validations", index)
            text = str(rule.get("rule", "")).strip()
            message = str(rule.get("message", ""))
            if not text:
                self.report((*here, "rule"), "rule is not specified")
            elif message and not message.strip():
                self.report((*here, "message"), "message must be non-empty if specified")
            elif re.search(r"[\n\r]", message.strip()):
                self.report((*here, "message"), "message must not contain line breaks")
            elif (
                re.search(r"[\n\r]", text)
                and not message.strip()
                and not rule.get("messageExpression")
            ):
                self.report(
                    (*here, "message"), "message must be specified if rule contains line breaks"
                )


_RE2_UNSUPPORTED = re.compile(r"\(\?<?[=!]|\(\?P=|\\[1-9]")


def _check_pattern(pattern: str, path: JsonPath, report: Report) -> None:
    """Kubernetes compiles patterns with Go's RE2, which has no lookarounds or backreferences."""
    if _RE2_UNSUPPORTED.search(pattern):
        report(
            path,
            "lookarounds and backreferences are not supported by Kubernetes (Go RE2) regular expressions",
        )
        return
    compiled = compile_go_regexp(pattern)
    if isinstance(compiled, str):
        report(path, f"must be a valid regular expression, but isn't: {compiled}")


def default_problems(default: Any, schema: dict[str, Any]) -> list[str]:
    """Why ``default`` is not a valid value of ``schema``, as the apiserver would apply it ([] if it is).

    Like apiextensions: the default must survive pruning unchanged, and is validated after the defaults
    nested in its own schema are applied to it.
    """
    value = copy.deepcopy(default)
    problems = [f'unknown field "{path}" (it would be pruned)' for path in prune(value, schema)]
    apply_defaults(value, schema)
    for cause in validate(value, schema):
        where = "" if cause.field in ("", "<nil>") else f"{cause.field}: "
        problems.append(where + " ".join(cause.message.split()))
    return problems


def _check_defaults(s: Any, path: JsonPath, report: Report, forbidden: str) -> None:
    """Defaults: forbidden in root apiVersion/kind/metadata, otherwise valid against their own schema."""
    if not isinstance(s, dict):
        return
    if "default" in s:
        if forbidden:
            report((*path, "default"), f"must not be set {forbidden}")
        else:
            for problem in default_problems(s["default"], s):
                report((*path, "default"), f"invalid default: {problem}")
    for name, sub in (s.get("properties") or {}).items():
        reason = forbidden or (f"in top-level {name}" if not path and name in _META_FIELDS else "")
        _check_defaults(sub, (*path, "properties", name), report, reason)
    if isinstance(s.get("items"), dict):
        _check_defaults(s["items"], (*path, "items"), report, forbidden)
    if isinstance(s.get("additionalProperties"), dict):
        _check_defaults(
            s["additionalProperties"], (*path, "additionalProperties"), report, forbidden
        )
