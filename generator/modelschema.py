"""Turn CRD-style schemas into an OpenAPI document datamodel-code-generator models faithfully.

datamodel-code-generator ignores every ``x-kubernetes-*`` key and names inline objects by heuristics
(``Spec1``…``Spec12``), so before handing it a schema we (1) lower the Kubernetes extensions to plain JSON
Schema — int-or-string to ``anyOf``, preserve-unknown-fields to ``additionalProperties: true`` — and (2) hoist
every inline object into a component we name ourselves (``CronTabSpec``, ``CronTabStatusConditionsItem``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from generator.naming import pascal
from generator.schema_keywords import COMPACT_KEYWORDS

# package data (not a path beside the sources), so it loads from any install of the generator
SHARED_SCHEMAS = resources.files("generator") / "templates" / "openapi" / "shared-schemas.json"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
# The value keywords a model field keeps as they are; nested schemas (items, properties,
# additionalProperties) are lowered one by one, and examples mean nothing to a model.
_KEEP_KEYS = COMPACT_KEYWORDS - {"items", "properties", "additionalProperties", "example"}


def _metadata_components() -> dict[str, Any]:
    """ObjectMeta and the types it references, renamed to short class names and lowered."""
    shared = json.loads(SHARED_SCHEMAS.read_text(encoding="utf-8"))["schemas"]
    names = {"ObjectMeta", "ManagedFieldsEntry", "OwnerReference"}
    components: dict[str, Any] = {}
    for name in sorted(names):
        components[name] = _rewrite_meta_refs(shared[_META + name])
    return components


def _rewrite_meta_refs(node: Any) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref") or (node.get("allOf") or [{}])[0].get("$ref")
        if isinstance(ref, str):
            target = ref.rsplit("/", 1)[-1].removeprefix(_META)
            extra = {k: v for k, v in node.items() if k in ("description", "default")}
            if target in ("Time", "MicroTime"):
                return {"type": "string", "format": "date-time", **extra}
            if target == "FieldsV1":
                return {"type": "object", "additionalProperties": True, **extra}
            return {"$ref": f"#/components/schemas/{target}", **extra}
        return {
            k: _rewrite_meta_refs(v) for k, v in node.items() if not k.startswith("x-kubernetes")
        }
    if isinstance(node, list):
        return [_rewrite_meta_refs(v) for v in node]
    return node


class _Hoister:
    """Walks one kind's schema, lowering extensions and naming every object type after its path."""

    def __init__(self) -> None:
        self.components: dict[str, Any] = {}

    def lower(self, schema: Mapping[str, Any], name: str) -> dict[str, Any]:
        if schema.get("x-kubernetes-int-or-string"):
            branches = [{"type": "integer"}, {"type": "string"}]
            if "pattern" in schema:
                branches[1]["pattern"] = schema["pattern"]
            out: dict[str, Any] = {"anyOf": branches}
            if "description" in schema:
                out["description"] = schema["description"]
            return out
        out = {k: v for k, v in schema.items() if k in _KEEP_KEYS}
        if out.get("format") == "byte":
            del out["format"]  # keep base64 text as str (see DESIGN: Base64Str loses binary values)
        kind = schema.get("type")
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            out["items"] = self.lower(schema["items"], name + "Item")
        elif kind == "object" or "properties" in schema:
            properties = schema.get("properties")
            additional = schema.get("additionalProperties")
            if properties:
                lowered = {
                    field: self.lower(sub, name + pascal(field))
                    for field, sub in properties.items()
                }
                component: dict[str, Any] = {"type": "object", "properties": lowered}
                for key in ("description", "required"):
                    if key in schema:
                        component[key] = schema[key]
                if schema.get("x-kubernetes-preserve-unknown-fields"):
                    component["additionalProperties"] = True
                self.components[name] = component
                ref: dict[str, Any] = {"$ref": f"#/components/schemas/{name}"}
                if "default" in schema:
                    ref["default"] = schema["default"]
                return ref
            out["type"] = "object"
            if isinstance(additional, Mapping):
                out["additionalProperties"] = self.lower(additional, name + "Value")
            else:
                out["additionalProperties"] = True
        elif schema.get("x-kubernetes-preserve-unknown-fields") and kind is None:
            return {k: v for k, v in out.items() if k == "description"}
        return out


def model_document(kinds: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The OpenAPI document datamodel-code-generator gets for one group-version (kind → whole-object schema)."""
    hoister = _Hoister()
    for kind, schema in sorted(kinds.items()):
        properties = dict(schema.get("properties", {}))
        properties["metadata"] = {"$ref": "#/components/schemas/ObjectMeta"}
        root: dict[str, Any] = {"type": "object", "properties": {}}
        if "description" in schema:
            root["description"] = schema["description"]
        for field, sub in properties.items():
            if field == "metadata":
                root["properties"][field] = sub
            else:
                root["properties"][field] = hoister.lower(sub, kind + pascal(field))
        if schema.get("required"):
            root["required"] = list(schema["required"])
        hoister.components[kind] = root
    components = {**_metadata_components(), **hoister.components}
    return {
        "openapi": "3.0.3",
        "info": {"title": "apiforge models", "version": "generated"},
        "paths": {},
        "components": {"schemas": dict(sorted(components.items()))},
    }
