"""The API conventions `apiforge check` asks of what a revision adds, after kubernetes-sigs/kube-api-linter
(its optionalorrequired, ssatags, conditions and nofloats linters): only new fields, versions and kinds are
judged, so an existing API is not asked to change shape to pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from generator.definition import JsonPath
from generator.evolution_schema import ROOT_FIELDS, Report, field_name

__all__ = ["lint_added"]

CONDITION_REQUIRED: Final = ("type", "status", "lastTransitionTime", "reason", "message")
"""metav1.Condition's required fields (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go)."""

Marked = Callable[[JsonPath], bool]
"""Whether the property at a schema path says explicitly that it is optional or required."""


def _condition_problem(node: dict[str, Any]) -> str:
    if node.get("type") != "array" or not isinstance(node.get("items"), dict):
        return "is not a list"
    if node.get("x-kubernetes-list-type") != "map" or node.get("x-kubernetes-list-map-keys") != [
        "type"
    ]:
        return "is not a map list keyed by type (x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [type])"
    items = node["items"]
    missing = [
        name
        for name in CONDITION_REQUIRED
        if name not in (items.get("properties") or {}) or name not in items.get("required", ())
    ]
    if missing:
        return f"has items without the required metav1.Condition fields {', '.join(missing)}"
    return ""


class _Lint:
    def __init__(self, report: Report, marked: Marked) -> None:
        self.report = report
        self.marked = marked

    def node(self, node: dict[str, Any], path: JsonPath, name: str, required: bool) -> None:
        field = field_name(path)
        if len(path) > 1 and path[-2] == "properties" and not required and not self.marked(path):
            self.report(
                "optional-or-required",
                "warning",
                path,
                f"{field} is neither marked optional nor required (write required: true or false)",
            )
        if node.get("type") == "array" and "x-kubernetes-list-type" not in node:
            self.report(
                "list-type-missing",
                "warning",
                path,
                f"{field} has no x-kubernetes-list-type (atomic, set or map): server-side apply needs it "
                "to merge the lists of several managers",
            )
        if node.get("type") == "number":
            self.report(
                "no-floats",
                "warning",
                path,
                f"{field} is a floating-point number: its values do not round-trip across languages; use "
                "an integer, or a string (a quantity) for fractions",
            )
        if name == "conditions":
            problem = _condition_problem(node)
            if problem:
                self.report(
                    "conditions-shape",
                    "warning",
                    path,
                    f"{field} {problem}; write it as []Condition (metav1.Condition)",
                )
        self.children(node, path)

    def children(self, node: dict[str, Any], path: JsonPath) -> None:
        required = node.get("required", ())
        for key, child in (node.get("properties") or {}).items():
            if isinstance(child, dict) and not (not path and key in ROOT_FIELDS):
                self.node(child, (*path, "properties", key), key, key in required)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                self.node(node[key], (*path, key), "", True)


def lint_added(
    node: dict[str, Any], path: JsonPath, parent_required: bool, report: Report, marked: Marked
) -> None:
    """Report the conventions the schema node at ``path`` (new in this revision) and all below it break;
    ``parent_required``: its parent lists it as required."""
    lint = _Lint(report, marked)
    if path:
        lint.node(node, path, str(path[-1]), parent_required)
    else:
        lint.children(node, path)
