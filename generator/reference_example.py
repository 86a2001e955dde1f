"""Sample objects built from a kind's schema, since a definition carries none: the API reference's example
(a minimal object: required fields only) and `apiforge check`'s round-trip sample (every field set). Each
field gets its ``example``, else its default, else the first enum value, else a placeholder of its type that
meets its bounds."""

from __future__ import annotations

from typing import Any

from generator.definition import Definition, Version

__all__ = ["example_object"]


def _value(node: dict[str, Any], every: bool) -> Any:
    for key in ("example", "default"):
        if key in node:
            return node[key]
    if node.get("enum"):
        return node["enum"][0]
    if node.get("x-kubernetes-int-or-string") is True:
        return 1
    kind = node.get("type")
    if kind == "object":
        properties = node.get("properties") or {}
        names = properties if every else [n for n in node.get("required", ()) if n in properties]
        if every and isinstance(node.get("additionalProperties"), dict):
            return {"key": _value(node["additionalProperties"], every)}
        return {name: _value(properties[name], every) for name in names}
    if kind == "array":
        wanted = every or node.get("minItems")
        return [_value(node["items"], every)] if wanted and "items" in node else []
    if kind in ("integer", "number"):
        return max(node.get("minimum", 1), 1) if "minimum" in node else 1
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * max(int(node.get("minLength", 0)), 1) if "pattern" not in node else "example"
    return {}


def example_object(definition: Definition, version: Version, every: bool = False) -> dict[str, Any]:
    """apiVersion, kind, a metadata name (and namespace) and every required field of ``version`` (``every``:
    every field it declares)."""
    metadata: dict[str, Any] = {"name": f"example-{definition.singular}"}
    if definition.namespaced:
        metadata["namespace"] = "default"
    api_version = f"{definition.group}/{version.name}" if definition.group else version.name
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": definition.kind, "metadata": metadata}
    schema = version.schema
    for name, node in (schema.get("properties") or {}).items():
        if name not in obj and isinstance(node, dict) and (every or name in ("spec", "data")):
            obj[name] = _value(node, every)
    return obj
