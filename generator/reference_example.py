"""The example object of a kind in the API reference: a minimal valid object built from its schema, since a
definition carries no sample objects. Each required field gets its ``example``, else its default, else the
first enum value, else a placeholder of its type that meets its bounds; optional fields are left out."""

from __future__ import annotations

from typing import Any

from generator.definition import Definition, Version

__all__ = ["example_object"]


def _value(node: dict[str, Any]) -> Any:
    for key in ("example", "default"):
        if key in node:
            return node[key]
    if node.get("enum"):
        return node["enum"][0]
    if node.get("x-kubernetes-int-or-string") is True:
        return 1
    kind = node.get("type")
    if kind == "object":
        return {
            name: _value(node["properties"][name])
            for name in node.get("required", ())
            if name in (node.get("properties") or {})
        }
    if kind == "array":
        return [_value(node["items"])] if node.get("minItems") and "items" in node else []
    if kind in ("integer", "number"):
        return max(node.get("minimum", 1), 1) if "minimum" in node else 1
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * max(int(node.get("minLength", 0)), 1) if "pattern" not in node else "example"
    return {}


def example_object(definition: Definition, version: Version) -> dict[str, Any]:
    """apiVersion, kind, a metadata name (and namespace) and every required field of ``version``."""
    metadata: dict[str, Any] = {"name": f"example-{definition.singular}"}
    if definition.namespaced:
        metadata["namespace"] = "default"
    api_version = f"{definition.group}/{version.name}" if definition.group else version.name
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": definition.kind, "metadata": metadata}
    schema = version.schema
    for name in ("spec", "data"):
        node = (schema.get("properties") or {}).get(name)
        if isinstance(node, dict):
            obj[name] = _value(node)
    return obj
