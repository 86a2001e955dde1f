"""The schema rules of `apiforge check`: what changed between two revisions of one version's openAPIV3Schema
that breaks stored objects or clients (after openshift/crd-schema-checker's comparators).

The two schemas are walked side by side; a change is reported at the node of the new schema (or where the
node was, for a removed field) with a rule name, a severity and a message. A subtree the new revision adds is
handed to ``added`` (the conventions of new API surface, :mod:`generator.evolution_lint`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from generator.definition import JsonPath

__all__ = ["RATCHETING", "ROOT_FIELDS", "Added", "Report", "diff_schema", "field_name"]

Report = Callable[[str, str, JsonPath, str], None]
"""(rule, severity, schema path in the new schema, message)."""

Added = Callable[[dict[str, Any], JsonPath, bool], None]
"""A node the new schema adds, its path, and whether its parent requires it."""

RATCHETING: Final = (
    "stored objects that fail it still read, and updates that leave the value unchanged pass (validation "
    "ratcheting, Kubernetes 1.30+); creates and updates that change it are refused"
)

ROOT_FIELDS: Final = ("apiVersion", "kind", "metadata")
"""What every object has at its root whether its schema declares it or not: kube's pruning keeps them there
(staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go, isResourceRoot), so a
compact definition declares them and a CRD may not, and neither adding nor dropping them changes anything."""

_LARGER_IS_TIGHTER: Final = ("minLength", "minItems", "minProperties", "minimum")
_SMALLER_IS_TIGHTER: Final = ("maxLength", "maxItems", "maxProperties", "maximum")
_ADDED_IS_TIGHTER: Final = ("pattern", "format")
_TRUE_IS_TIGHTER: Final = ("exclusiveMinimum", "exclusiveMaximum", "uniqueItems")


def field_name(path: JsonPath) -> str:
    """The field a schema path stands for, as kube names fields: ``spec.ports[].name``, ``spec.labels[*]``."""
    out = ""
    steps = iter(path)
    for step in steps:
        if step == "properties":
            name = str(next(steps, ""))
            out = f"{out}.{name}" if out else name
        elif step == "items":
            out += "[]"
        elif step == "additionalProperties":
            out += "[*]"
    return out or "<root>"


def _type(node: dict[str, Any]) -> str:
    if node.get("x-kubernetes-int-or-string") is True:
        return "int-or-string"
    return str(node.get("type", "any"))


def _list_type(node: dict[str, Any]) -> tuple[str, tuple[str, ...], str]:
    return (
        node.get("x-kubernetes-list-type", "atomic") if node.get("type") == "array" else "",
        tuple(node.get("x-kubernetes-list-map-keys", ())),
        node.get("x-kubernetes-map-type", ""),
    )


class _Diff:
    def __init__(self, report: Report, added: Added) -> None:
        self.report = report
        self.added = added

    def node(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath) -> None:
        name = field_name(path)
        if _type(old) != _type(new):
            self.report(
                "type-changed",
                "breaking",
                (*path, "type"),
                f"{name} changed type from {_type(old)} to {_type(new)}: stored objects and clients "
                "that send the old type fail to decode or validate",
            )
            return
        self.list_type(old, new, path, name)
        self.default(old, new, path, name)
        self.validation(old, new, path, name)
        self.enum(old, new, path, name)
        self.rules(old, new, path, name)
        self.properties(old, new, path, name)
        for key in ("items", "additionalProperties"):
            if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
                self.node(old[key], new[key], (*path, key))

    def list_type(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, name: str
    ) -> None:
        before, after = _list_type(old), _list_type(new)
        if before != after:
            shown = [
                "/".join(filter(None, (t, ",".join(keys), m))) or "atomic"
                for t, keys, m in (before, after)
            ]
            self.report(
                "list-type-changed",
                "breaking",
                path,
                f"{name} changed its list or map type from {shown[0]} to {shown[1]}: server-side apply "
                "merges and owns its items differently, and managedFields recorded before no longer match",
            )

    def default(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, name: str) -> None:
        if "default" in old and "default" not in new:
            self.report(
                "default-changed",
                "breaking",
                path,
                f"{name} lost its default {old['default']!r}: objects that relied on it read without a value",
            )
        elif "default" in old and old["default"] != new["default"]:
            self.report(
                "default-changed",
                "breaking",
                (*path, "default"),
                f"{name} changed its default from {old['default']!r} to {new['default']!r}: stored objects "
                "without the field read with the new value, and clients see other values than before",
            )
        elif "default" in new and "default" not in old:
            self.report(
                "default-changed",
                "warning",
                (*path, "default"),
                f"{name} got the default {new['default']!r}: stored objects without the field read with it",
            )

    def validation(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, name: str
    ) -> None:
        for key in (
            *_LARGER_IS_TIGHTER,
            *_SMALLER_IS_TIGHTER,
            *_ADDED_IS_TIGHTER,
            *_TRUE_IS_TIGHTER,
        ):
            if key not in new or new[key] == old.get(key):
                continue
            was = old.get(key)
            tighter = (
                was is None
                or key in _ADDED_IS_TIGHTER
                or key in _TRUE_IS_TIGHTER
                or (key in _LARGER_IS_TIGHTER and new[key] > was)
                or (key in _SMALLER_IS_TIGHTER and new[key] < was)
            )
            if tighter and new[key] is not False:
                before = "" if was is None else f" from {was!r}"
                self.report(
                    "validation-tightened",
                    "breaking",
                    (*path, key),
                    f"{name}: {key} changed{before} to {new[key]!r}; {RATCHETING}",
                )
        if old.get("nullable") is True and new.get("nullable") is not True:
            self.report(
                "validation-tightened",
                "breaking",
                path,
                f"{name} is no longer nullable: a null is dropped, or refused where it is required",
            )

    def enum(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, name: str) -> None:
        if "enum" not in new:
            return
        if "enum" not in old:
            self.report(
                "validation-tightened",
                "breaking",
                (*path, "enum"),
                f"{name} is now limited to {new['enum']!r}; {RATCHETING}",
            )
            return
        removed = [value for value in old["enum"] if value not in new["enum"]]
        if removed:
            self.report(
                "enum-value-removed",
                "breaking",
                (*path, "enum"),
                f"{name} no longer allows {', '.join(map(repr, removed))}; {RATCHETING}",
            )

    def rules(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, name: str) -> None:
        known = {rule.get("rule") for rule in old.get("x-kubernetes-validations", ())}
        for index, rule in enumerate(new.get("x-kubernetes-validations", ())):
            if rule.get("rule") in known:
                continue
            text = rule.get("rule", "")
            transition = "oldSelf" in text
            why = (
                "it uses oldSelf, so it judges updates only"
                if transition
                else RATCHETING.replace("fail it", "fail the rule")
            )
            self.report(
                "validation-tightened",
                "breaking",
                (*path, "x-kubernetes-validations", index, "rule"),
                f"{name}: new rule {text!r}; {why}",
            )

    def properties(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, name: str
    ) -> None:
        old_props: dict[str, Any] = old.get("properties") or {}
        new_props: dict[str, Any] = new.get("properties") or {}
        keeps_unknown = new.get("x-kubernetes-preserve-unknown-fields") is True
        implicit = () if path else ROOT_FIELDS
        for key, child in old_props.items():
            child_path = (*path, "properties", key)
            if key not in new_props and key in implicit:
                continue
            if key not in new_props:
                if not keeps_unknown:
                    self.report(
                        "field-removed",
                        "breaking",
                        child_path,
                        f"{field_name(child_path)} was removed: its stored values are pruned when an "
                        "object is next written, and clients that send it are refused (strict) or warned",
                    )
            elif isinstance(child, dict) and isinstance(new_props[key], dict):
                self.node(child, new_props[key], child_path)
        for key, child in new_props.items():
            if key not in old_props and key not in implicit and isinstance(child, dict):
                self.added(child, (*path, "properties", key), key in new.get("required", ()))
        if old.get("x-kubernetes-preserve-unknown-fields") is True and not keeps_unknown:
            self.report(
                "field-removed",
                "breaking",
                path,
                f"{name} no longer preserves unknown fields: what it does not declare is pruned",
            )
        required = [key for key in new.get("required", ()) if key not in old.get("required", ())]
        for key in required:
            child = new_props.get(key, {})
            defaulted = isinstance(child, dict) and "default" in child
            self.report(
                "required-added",
                "warning" if defaulted else "breaking",
                (*path, "properties", key),
                f"{field_name((*path, 'properties', key))} is newly required"
                + (
                    ", with a default that fills it in"
                    if defaulted
                    else ": creates without it are refused; a stored object that lacks it can be "
                    "updated only where the update leaves its parent unchanged (validation ratcheting)"
                ),
            )


def diff_schema(
    old: dict[str, Any],
    new: dict[str, Any],
    report: Report,
    added: Added,
) -> None:
    """Report what changed from ``old`` to ``new`` (one version's openAPIV3Schema in each revision)."""
    _Diff(report, added).node(old, new, ())
