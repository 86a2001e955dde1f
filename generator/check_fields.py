"""Field references of a version — printer columns, scale paths, selectable fields — checked against its schema.

apiextensions accepts a printer column or scale path that names no field (the column is then empty, the
scale subresource fails at run time); apiforge knows the schema at generation time, so a reference to a field
that does not exist, or one of an incompatible type, is reported where it is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apiserver.machinery.jsonpath import Array, Field, Filter, JSONPathError, Wildcard, compile_path
from generator.definition import JsonPath, Version

__all__ = [
    "OBJECT_META",
    "PathError",
    "check_field_references",
    "field_kind",
    "parse_jsonpath",
    "resolve",
]

OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{
            name: {"type": "string"}
            for name in ("name", "generateName", "namespace", "uid", "resourceVersion")
        },
        "selfLink": {"type": "string"},
        "generation": {"type": "integer", "format": "int64"},
        "creationTimestamp": {"type": "string", "format": "date-time"},
        "deletionTimestamp": {"type": "string", "format": "date-time"},
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "ownerReferences": {
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
        "managedFields": {
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    },
}
"""The ObjectMeta fields a JSONPath may name: metadata is implicit in every schema (``{type: object}``)."""

Step = str | None
"""A JSONPath step: a field name, ``EACH`` for [*] (array items or map values), or None for [0] / [?(...)]."""
EACH = "[*]"
UNCHECKED = "..."
"""The rest of a path the schema cannot check (recursive descent, unions, literals)."""

_SIMPLE_PATH = re.compile(r"^(\.[^.\[\]\s]+)+$")
_COLUMN_TYPES: dict[str, tuple[str, ...]] = {
    "integer": ("integer", "int-or-string"),
    "number": ("integer", "number", "int-or-string"),
    "boolean": ("boolean",),
    "date": ("string",),
}
MAX_SELECTABLE_FIELDS = 8


class PathError(ValueError):
    """A JSONPath that cannot be parsed, or that leaves the schema."""


def parse_jsonpath(text: str) -> list[Step]:
    """The steps of a printer column's JSONPath (``.status.conditions[?(@.type=="Ready")].status``) that the
    schema can check: parsed by the runtime's JSONPath, kube's grammar (``apiserver.machinery.jsonpath``), up
    to the first step that no schema node stands for (``..``, a union, a literal), after which
    :data:`UNCHECKED` ends the steps.

    kube refuses a path that does not start with ``.`` (``validateSimpleJSONPath``); one its parser refuses
    it cannot print (``tableconvertor.New``: "unrecognized column definition").
    """
    if not text.startswith("."):
        raise PathError("must be a simple json path starting with .")
    try:
        compiled = compile_path(text)
    except JSONPathError as error:
        raise PathError(f"is an unrecognized column definition: {error}") from None
    steps: list[Step] = []
    for node in compiled.nodes:
        if isinstance(node, Field):
            steps.append(node.name)
        elif isinstance(node, Wildcard) or (
            isinstance(node, Array) and not (node.params[0].known or node.params[1].known)
        ):
            steps.append(EACH)
        elif isinstance(node, Array | Filter):
            steps.append(None)
        else:
            steps.append(UNCHECKED)
            break
    return steps


def field_kind(node: dict[str, Any] | None) -> str:
    """What a schema node holds: a JSON type, "int-or-string", or "any" (unknown fields preserved, no type)."""
    if node is None:
        return "any"
    if node.get("x-kubernetes-int-or-string") is True:
        return "int-or-string"
    kind = node.get("type")
    return str(kind) if kind else "any"


def resolve(schema: dict[str, Any], steps: list[Step]) -> dict[str, Any] | None:
    """The schema node a path names; None when it lies under preserved unknown fields (not checkable).

    Raises PathError when the path leaves the schema.
    """
    node: dict[str, Any] | None = schema
    shown = ""
    for index, step in enumerate(steps):
        if node is None or step == UNCHECKED:
            return None
        if step is None or step == EACH:
            node = _element(node, shown, each=step == EACH)
            shown += "[*]"
            continue
        node = OBJECT_META if index == 0 and step == "metadata" else _member(node, step, shown)
        shown += f".{step}"
    return node


def _element(node: dict[str, Any], shown: str, each: bool) -> dict[str, Any] | None:
    """The node of an array's items (or, for [*], of a map's values, which the runtime also iterates)."""
    kind = field_kind(node)
    additional = node.get("additionalProperties")
    if kind == "array":
        items = node.get("items")
        return items if isinstance(items, dict) else None
    if each and isinstance(additional, dict):
        return additional
    if kind == "any" or (
        each and (additional is True or node.get("x-kubernetes-preserve-unknown-fields"))
    ):
        return None
    raise PathError(f"{shown} is {kind}, not an array")


def _member(node: dict[str, Any], name: str, shown: str) -> dict[str, Any] | None:
    properties = node.get("properties") or {}
    additional = node.get("additionalProperties")
    if name in properties:
        found: dict[str, Any] = properties[name]
        return found
    if isinstance(additional, dict):
        return additional
    kind = field_kind(node)
    if (
        additional is True
        or node.get("x-kubernetes-preserve-unknown-fields") is True
        or kind == "any"
    ):
        return None
    if kind != "object":
        raise PathError(f"{shown} is {kind}, not an object")
    raise PathError(f"{shown}.{name} does not exist")


Report = Callable[[JsonPath, str], None]


@dataclass(frozen=True)
class _Target:
    """What one reference must name: where it is written, and which field kinds it accepts."""

    path: JsonPath
    text: str
    accepts: tuple[str, ...] | None  # None: any kind
    purpose: str
    declared: bool = False  # must the field be declared (not merely kept as an unknown field)?


def _alternatives(kinds: tuple[str, ...]) -> str:
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"


def _check(
    schema: dict[str, Any], target: _Target, version: str, report: Report, simple: bool
) -> None:
    if simple and not _SIMPLE_PATH.match(target.text):
        report(target.path, f'"{target.text}" must be a simple dotted path such as .spec.replicas')
        return
    try:
        steps = parse_jsonpath(target.text)
    except PathError as exc:
        report(target.path, f'JSONPath "{target.text}" {exc}')
        return
    try:
        node = resolve(schema, steps)
    except PathError as exc:
        report(target.path, f"{exc} in the schema of version {version}")
        return
    if node is None:
        if target.declared:
            report(
                target.path,
                f"{target.text} must be declared in the schema of version {version}, not preserved",
            )
        return
    if target.accepts is None:
        return
    kind = field_kind(node)
    if kind not in target.accepts:
        wanted = _alternatives(target.accepts)
        report(
            target.path,
            f"{target.text} is {kind} in version {version}; {target.purpose} needs {wanted}",
        )


def check_field_references(version: Version, report: Report, *, builtin: bool = False) -> None:
    """Printer columns, scale paths and selectable fields of one version, against its schema.

    ``report`` takes a definition path relative to ``("versions", <name>)``. A built-in kind may make more
    fields selectable than a CRD may (kube's Event: eleven, in its field label conversion function).
    """
    schema, name = version.schema, version.name
    for index, column in enumerate(version.printer_columns):
        if column.json_path:
            accepts = _COLUMN_TYPES.get(column.type)
            purpose = f'printer column "{column.name}" of type {column.type}'
            target = _Target(
                ("printerColumns", index, "jsonPath"), column.json_path, accepts, purpose
            )
            _check(schema, target, name, report, simple=False)
    scale = version.scale_subresource
    if scale is not None:
        for key, text, prefixes, accepts in (
            ("specReplicasPath", scale.spec_replicas_path, (".spec.",), ("integer",)),
            ("statusReplicasPath", scale.status_replicas_path, (".status.",), ("integer",)),
            ("labelSelectorPath", scale.label_selector_path, (".spec.", ".status."), ("string",)),
        ):
            path = ("subresources", "scale", key)
            if not text:
                continue
            if not text.startswith(prefixes):
                report(
                    path, f'"{text}" must be a path under {" or ".join(p[:-1] for p in prefixes)}'
                )
                continue
            _check(schema, _Target(path, text, accepts, f"scale {key}"), name, report, simple=True)
    _check_selectable(version, report, builtin)


def _check_selectable(version: Version, report: Report, builtin: bool) -> None:
    fields = version.selectable_fields
    if len(fields) > MAX_SELECTABLE_FIELDS and not builtin:
        report(
            ("selectableFields",), f"at most {MAX_SELECTABLE_FIELDS} selectable fields are allowed"
        )
    seen: set[str] = set()
    for index, text in enumerate(fields):
        path = ("selectableFields", index)
        if text in seen:
            report(path, f'"{text}" is listed twice')
            continue
        seen.add(text)
        accepts = ("string", "integer", "boolean")
        target = _Target(path, text, accepts, "a selectable field", declared=True)
        _check(version.schema, target, version.name, report, simple=True)
