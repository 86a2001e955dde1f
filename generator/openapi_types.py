"""Named OpenAPI types of built-in kinds: the sub-schemas kube-openapi publishes as components of their own.

kube publishes each Go struct as a component (``io.k8s.api.core.v1.ServicePort``) and a field as a reference
to it, and `kubectl explain` prints the type's name (``ports <[]ServicePort>``). A built-in definition names
these with ``openapiTypes`` (``spec.ports[]: ServicePort``: a field path, ``[]`` for a list's items); the
OpenAPI emitter moves each named sub-schema into a component and leaves a reference in its place.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

TYPE_PATH = re.compile(r"^[A-Za-z0-9_$-]+(\[\])?(\.[A-Za-z0-9_$-]+(\[\])?)*$")
TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
REF = "#/components/schemas/"


def steps(path: str) -> list[str]:
    """``spec.ports[]`` → ["spec", "ports", "[]"]."""
    found: list[str] = []
    for part in path.split("."):
        name, brackets, _ = part.partition("[]")
        found.append(name)
        if brackets:
            found.append("[]")
    return found


def _child(node: dict[str, Any], step: str) -> Any:
    if step == "[]":
        return node.get("items")
    return node.get("properties", {}).get(step)


def locate(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The sub-schema a type path names in a kind's schema, or None."""
    node: Any = schema
    for step in steps(path):
        node = _child(node, step) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def hoist(
    schema: dict[str, Any], types: tuple[tuple[str, str], ...], component: Callable[[str], str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The kind's schema with each named sub-schema replaced by a reference, and the components they became
    (deepest first, so that a type's own named fields are references too)."""
    result = copy.deepcopy(schema)
    components: dict[str, Any] = {}
    for path, name in sorted(types, key=lambda entry: -len(steps(entry[0]))):
        *parents, last = steps(path)
        parent = result
        for step in parents:
            parent = _child(parent, step)
        holder = parent if last == "[]" else parent["properties"]
        key = "items" if last == "[]" else last
        node = holder[key]
        reference: dict[str, Any] = {"allOf": [{"$ref": f"{REF}{component(name)}"}]}
        if "description" in node:
            reference["description"] = node["description"]
        holder[key] = reference
        components[component(name)] = node
    return result, components
