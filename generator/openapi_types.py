"""Named OpenAPI types of built-in kinds: the sub-schemas kube-openapi publishes as components of their own.

kube publishes each Go struct as a component (``io.k8s.api.core.v1.ServicePort``) and a field as a reference
to it, and `kubectl explain` prints the type's name (``ports <[]ServicePort>``). A built-in definition names
these with ``openapiTypes`` (``spec.ports[]: ServicePort``: a field path, ``[]`` for a list's items); the
OpenAPI emitter moves each named sub-schema into a component and leaves a reference in its place. Without
being named, int-or-string and quantity fields refer to kube's IntOrString and Quantity.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from generator.schema_shorthand import QUANTITY_PATTERN

TYPE_PATH = re.compile(r"^[A-Za-z0-9_$-]+(\[\])?(\.[A-Za-z0-9_$-]+(\[\])?)*$")
TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
REF = "#/components/schemas/"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
INT_OR_STRING_SCHEMA = {  # as in kube's api__v1_openapi.json
    "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
    "marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for "
    "example, a JSON field that can accept a name or number.",
    "format": "int-or-string",
    "oneOf": [{"type": "integer"}, {"type": "string"}],
}
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
QUANTITY_SCHEMA = {  # kube's, its description's first paragraph
    "description": "Quantity is a fixed-point representation of a number. It provides convenient "
    "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors.",
    "oneOf": [{"type": "string"}, {"type": "number"}],
}
SCALAR_TYPES = {INT_OR_STRING: INT_OR_STRING_SCHEMA, QUANTITY: QUANTITY_SCHEMA}


def scalar_components(schemas: dict[str, Any]) -> dict[str, Any]:
    """IntOrString and Quantity, those of them that the document's schemas refer to."""
    return {name: schema for name, schema in SCALAR_TYPES.items() if _uses(schemas, name)}


def with_scalar_references(node: Any) -> Any:
    """A built-in kind's int-or-string fields refer to kube's IntOrString (its quantities to Quantity), as
    kube-openapi publishes Go's intstr.IntOrString and resource.Quantity: `kubectl explain` then shows
    ``<IntOrString>`` and ``<Quantity>`` where an inline schema says ``<Object>``."""
    if isinstance(node, list):
        return [with_scalar_references(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("x-kubernetes-int-or-string") is True:
        target = QUANTITY if node.get("pattern") == QUANTITY_PATTERN else INT_OR_STRING
        named: dict[str, Any] = {"allOf": [{"$ref": f"{REF}{target}"}]}
        if "description" in node:
            named["description"] = node["description"]
        return named
    return {key: with_scalar_references(value) for key, value in node.items()}


def _uses(node: Any, component: str) -> bool:
    return f'"{REF}{component}"' in json.dumps(node)


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
