"""Conversion rules: every version converts to the hub (the storage version) and back without losing data.

A non-hub version converts by declared field moves (renames) and optional Python hooks. This module checks
that the moves are well formed (both ends exist, with the same type) and that together they are *total*: each
field of the version has a counterpart in the hub and each hub field one in the version, unless a hook is
declared for that direction (toHub for version fields the hub lacks, fromHub for hub fields the version lacks,
both for a field whose type changes). That is what makes the generated converters lossless.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from generator.check_fields import field_kind
from generator.definition import Definition, FieldMove, JsonPath, Version

__all__ = ["HOOK_REFERENCE", "check_conversion", "preserved", "schema_fields"]

HOOK_REFERENCE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_IMPLICIT = ("apiVersion", "kind", "metadata")
_ITEMS, _VALUES = "[]", "*"

Report = Callable[[JsonPath, str], None]
"""Called with (definition path, message)."""

FieldPath = tuple[str, ...]
Fields = dict[FieldPath, tuple[dict[str, Any], JsonPath]]
"""Field path (property names, "[]" for array items, "*" for map values) → (schema node, its schema path)."""


def _show(path: FieldPath) -> str:
    out = ""
    for part in path:
        out += part if part == _ITEMS else f".{part}"
    return out.lstrip(".")


def schema_fields(schema: dict[str, Any]) -> Fields:
    """Every field below the root, parents before children; free-form (preserve-unknown) nodes are leaves."""
    found: Fields = {}

    def walk(node: dict[str, Any], path: FieldPath, schema_path: JsonPath) -> None:
        for name, sub in (node.get("properties") or {}).items():
            if (not path and name in _IMPLICIT) or not isinstance(sub, dict):
                continue
            here, where = (*path, name), (*schema_path, "properties", name)
            found[here] = (sub, where)
            walk(sub, here, where)
        for key, step in (("items", _ITEMS), ("additionalProperties", _VALUES)):
            sub = node.get(key)
            if isinstance(sub, dict):
                here, where = (*path, step), (*schema_path, key)
                found[here] = (sub, where)
                walk(sub, here, where)

    walk(schema, (), ())
    return found


def _under(path: FieldPath, prefixes: list[FieldPath]) -> bool:
    return any(path[: len(prefix)] == prefix for prefix in prefixes)


def _container(node: dict[str, Any]) -> bool:
    """A structured object: it needs no counterpart of its own, its fields are matched one by one.

    (So ``spec.template.image: spec.image`` can move a field out of an object that then has nothing left.)
    """
    return (
        node.get("type") == "object"
        and bool(node.get("properties"))
        and node.get("x-kubernetes-preserve-unknown-fields") is not True
    )


def preserved(path: FieldPath, fields: Fields) -> bool:
    """Whether ``path`` lies under a node that keeps unknown fields (so it has a counterpart implicitly)."""
    return any(
        path[:end] in fields
        and fields[path[:end]][0].get("x-kubernetes-preserve-unknown-fields") is True
        for end in range(len(path) - 1, 0, -1)
    )


class _Moves:
    """The rename table in both directions; the longest matching prefix wins."""

    def __init__(self, moves: tuple[FieldMove, ...]) -> None:
        self.moves = moves

    def _apply(self, path: FieldPath, to_hub: bool) -> FieldPath:
        best: tuple[FieldPath, FieldPath] | None = None
        for move in self.moves:
            source, target = (
                (move.version_path, move.hub_path) if to_hub else (move.hub_path, move.version_path)
            )
            if path[: len(source)] == source and (best is None or len(source) > len(best[0])):
                best = (source, target)
        return path if best is None else (*best[1], *path[len(best[0]) :])

    def to_hub(self, path: FieldPath) -> FieldPath:
        return self._apply(path, True)

    def from_hub(self, path: FieldPath) -> FieldPath:
        return self._apply(path, False)


def check_conversion(definition: Definition, crd: bool, report: Report) -> None:
    """Report malformed hooks and renames and every field a version's conversion would lose."""
    hub = definition.storage_version
    for version in definition.versions:
        here = ("versions", version.name, "conversion")
        conversion = version.conversion
        for key, hook in (("toHub", conversion.to_hub_hook), ("fromHub", conversion.from_hub_hook)):
            if hook and not HOOK_REFERENCE.match(hook):
                report((*here, key), f'"{hook}" must be a "package.module:function" reference')
        if version.storage and definition.server.stored_as is not None:
            # the hub is another resource's: only hooks reach it (kube's hand-written conversions)
            if conversion.moves or not (conversion.to_hub_hook and conversion.from_hub_hook):
                report(
                    here,
                    "a kind stored as another resource converts through toHub and fromHub hooks",
                )
            continue
        if version.storage:
            if conversion.moves or conversion.to_hub_hook or conversion.from_hub_hook:
                report(
                    here, "the storage version is the hub; declare conversion on the other versions"
                )
            continue
        # a CRD's versions convert by strategy None (pruning) or by its webhook: neither need be total
        if _check_moves(version, hub, report) and not crd:
            _check_total(version, hub, report)


def _check_moves(version: Version, hub: Version, report: Report) -> bool:
    """Both ends of every rename exist with the same type; returns whether all renames are sound."""
    sound = True
    version_fields, hub_fields = schema_fields(version.schema), schema_fields(hub.schema)
    targets: dict[FieldPath, FieldPath] = {}
    for move in version.conversion.moves:
        where = ("versions", version.name, "conversion", "rename", ".".join(move.version_path))
        problem = _missing(move.version_path, version_fields, version.name) or _missing(
            move.hub_path, hub_fields, f"hub version {hub.name}"
        )
        if not problem and move.hub_path in targets:
            problem = (
                f"{_show(move.hub_path)} is already the target of {_show(targets[move.hub_path])}"
            )
        if not problem:
            ours = field_kind(version_fields[move.version_path][0])
            theirs = field_kind(hub_fields[move.hub_path][0])
            if ours != theirs:
                problem = (
                    f"{_show(move.version_path)} is {ours} but {_show(move.hub_path)} of hub version {hub.name} "
                    f"is {theirs}; a rename moves a value unchanged, so use a toHub/fromHub hook"
                )
        targets.setdefault(move.hub_path, move.version_path)
        if problem:
            report(where, problem)
            sound = False
    return sound


def _missing(path: FieldPath, fields: Fields, owner: str) -> str:
    if path and path[0] in _IMPLICIT:
        return f"{path[0]} cannot be renamed"
    for end in range(1, len(path)):
        node = fields.get(path[:end], ({}, ()))[0]
        if field_kind(node) == "array" or isinstance(node.get("additionalProperties"), dict):
            return (
                f"{_show(path[:end])} of {owner} is an array or map; renames cannot reach inside one, "
                "use a toHub/fromHub hook"
            )
    if path not in fields:
        return f"{_show(path)} does not exist in {owner}"
    return ""


def _check_total(version: Version, hub: Version, report: Report) -> None:
    conversion = version.conversion
    moves = _Moves(conversion.moves)
    ours, theirs = schema_fields(version.schema), schema_fields(hub.schema)
    remedy = "add a rename or a toHub/fromHub hook"
    reported: list[FieldPath] = []
    for path, (node, schema_path) in ours.items():
        if _under(path, reported):
            continue
        target = moves.to_hub(path)
        where = ("versions", version.name, "schema", *schema_path)
        if target not in theirs or moves.from_hub(target) != path:
            if not preserved(target, theirs) and not _container(node):
                reported.append(path)
                if not conversion.to_hub_hook:
                    report(
                        where,
                        f"field {_show(path)} of {version.name} has no counterpart in hub version "
                        f"{hub.name}; {remedy}",
                    )
            continue
        kind, hub_kind = field_kind(node), field_kind(theirs[target][0])
        if (
            kind != hub_kind and hub_kind != "any"
        ):  # a hub field keeping unknown fields holds any value
            reported.append(path)
            if not (conversion.to_hub_hook and conversion.from_hub_hook):
                report(
                    where,
                    f"field {_show(path)} of {version.name} is {kind} but {_show(target)} of hub "
                    f"version {hub.name} is {hub_kind}; {remedy}",
                )
    hub_reported: list[FieldPath] = []
    for path, (hub_node, schema_path) in theirs.items():
        source = moves.from_hub(path)
        if _under(path, hub_reported) or _under(source, reported):
            continue
        unmatched = source not in ours or moves.to_hub(source) != path
        if unmatched and not preserved(source, ours) and not _container(hub_node):
            hub_reported.append(path)
            if not conversion.from_hub_hook:
                report(
                    ("versions", hub.name, "schema", *schema_path),
                    f"field {_show(path)} of hub version {hub.name} has no counterpart in "
                    f"{version.name}; {remedy}",
                )
