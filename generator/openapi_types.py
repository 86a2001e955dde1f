"""Named OpenAPI types of built-in kinds: the sub-schemas kube-openapi publishes as components of their own.

kube publishes each Go struct as a component (``io.k8s.api.core.v1.ServicePort``) and a field as a reference
to it, and `kubectl explain` prints the type's name (``ports <[]ServicePort>``). A built-in definition names
these with ``openapiTypes`` (``spec.ports[]: ServicePort``: a field path, ``[]`` for a list's items); the
OpenAPI emitter moves each named sub-schema into a component and leaves a reference in its place. Without
being named, int-or-string and quantity fields refer to kube's IntOrString and Quantity, and date-time fields
to meta/v1 Time.

A qualified name (``involvedObject: io.k8s.api.core.v1.ObjectReference``) names a type of another package as
kube names it; when it is one kube publishes beside our own, in the shared meta schemas or in kube-types.json
(ObjectReference, LabelSelector, MicroTime...), the field refers to kube's schema, descriptions included, and
its own sub-schema is not published.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

from generator.modelschema import SHARED_SCHEMAS
from generator.schema_shorthand import QUANTITY_PATTERN

TYPE_PATH = re.compile(r"^[A-Za-z0-9_$-]+(\[\])?(\.[A-Za-z0-9_$-]+(\[\])?)*$")
TYPE_NAME = re.compile(r"^([a-z][a-z0-9-]*\.)*[A-Z][A-Za-z0-9]*$")
REF = "#/components/schemas/"
TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
KUBE_TYPES_FILE = resources.files("generator") / "templates" / "openapi" / "kube-types.json"
KUBE_TYPES: dict[str, Any] = json.loads(KUBE_TYPES_FILE.read_text(encoding="utf-8"))["schemas"]
"""kube's schemas of the API types built-in kinds of several groups share (ObjectReference, LabelSelector)."""
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


@cache
def published_types() -> frozenset[str]:
    """The types kube publishes itself, which a definition refers to rather than defines: the shared meta
    schemas and kube-types.json."""
    shared = json.loads(SHARED_SCHEMAS.read_text(encoding="utf-8"))["schemas"]
    return frozenset(shared) | frozenset(KUBE_TYPES)


def is_qualified(name: str) -> bool:
    """A type named with its package (io.k8s.api.core.v1.ObjectReference), not in the kind's own."""
    return "." in name


def kube_type_components(schemas: dict[str, Any]) -> dict[str, Any]:
    """kube's shared API types that the document's schemas refer to, and those they refer to in turn."""
    found: dict[str, Any] = {}
    while True:
        added = {
            name: schema
            for name, schema in KUBE_TYPES.items()
            if name not in found and _uses([schemas, found], name)
        }
        if not added:
            return found
        found.update(added)


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
        return _reference(node, target)
    if node.get("type") == "string" and node.get("format") == "date-time":
        return _reference(node, TIME)  # metav1.Time; a MicroTime field is named so in openapiTypes
    return {key: with_scalar_references(value) for key, value in node.items()}


def _reference(node: dict[str, Any], component: str) -> dict[str, Any]:
    """A field that refers to a component, keeping its own description, as kube-openapi writes one."""
    named: dict[str, Any] = {"allOf": [{"$ref": f"{REF}{component}"}]}
    if "description" in node:
        named["description"] = node["description"]
    return named


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
    schema: dict[str, Any],
    types: tuple[tuple[str, str], ...],
    component: Callable[[str], str],
    published: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The kind's schema with each named sub-schema replaced by a reference, and the components they became
    (deepest first, so that a type's own named fields are references too); a type kube publishes itself
    (``published``) is only referred to."""
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
        holder[key] = _reference(node, component(name))
        if component(name) not in published:
            components[component(name)] = node
    return result, components
