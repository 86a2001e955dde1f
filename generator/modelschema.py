"""Turn CRD-style schemas into OpenAPI documents datamodel-code-generator models faithfully.

datamodel-code-generator ignores every ``x-kubernetes-*`` key and names inline objects by heuristics
(``Spec1``…``Spec12``), so before handing it a schema we (1) lower the Kubernetes extensions to plain JSON
Schema — int-or-string to ``anyOf``, preserve-unknown-fields to ``additionalProperties: true`` — and (2) hoist
every inline object into a component we name ourselves (``CronTabSpec``, ``ServiceSpecPortsItem``).

The meta/v1 types every group-version shares (ObjectMeta and what it references, ListMeta, Condition) are
modelled once, in the ``meta/v1/models.py`` module of the output. A group-version's document names its own
components ``group.version.models.<Name>`` and the shared ones ``meta.v1.models.<Name>``: datamodel-code-generator
then writes one module per prefix and imports the shared types into the group-version's module
(``from ...meta.v1.models import ObjectMeta``) instead of defining them again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from generator.naming import pascal
from generator.schema_keywords import COMPACT_KEYWORDS
from generator.schema_shorthand import CONDITION

# package data (not a path beside the sources), so it loads from any install of the generator
SHARED_SCHEMAS = resources.files("generator") / "templates" / "openapi" / "shared-schemas.json"
META_PACKAGE = ("meta", "v1")
"""Where the shared meta/v1 models are written, relative to the output directory."""
META_MODULE = (*META_PACKAGE, "models.py")
GROUP_VERSION_MODULE = ("group", "version", "models.py")
"""A group-version's module in the documents: only its depth matters, which is the real one
(``<group package>/<version>/models.py``), so the import of the shared module is right wherever it lands."""
_META_PREFIX = ".".join(META_MODULE).removesuffix(".py") + "."
_GROUP_VERSION_PREFIX = ".".join(GROUP_VERSION_MODULE).removesuffix(".py") + "."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_SHARED_META = ("ObjectMeta", "ManagedFieldsEntry", "OwnerReference", "ListMeta")
# The value keywords a model field keeps as they are; nested schemas (items, properties,
# additionalProperties) are lowered one by one, and examples mean nothing to a model.
_KEEP_KEYS = COMPACT_KEYWORDS - {"items", "properties", "additionalProperties", "example"}


def _ref(prefix: str, name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{prefix}{name}"}


def _meta_components() -> dict[str, Any]:
    """The shared meta/v1 types under their short class names, lowered: ObjectMeta and the types it
    references and ListMeta as Kubernetes publishes them, and Condition as ``[]Condition`` expands
    (with the kubebuilder patterns and lengths), its status enum named as in Go (metav1.ConditionStatus)."""
    shared = json.loads(SHARED_SCHEMAS.read_text(encoding="utf-8"))["schemas"]
    components: dict[str, Any] = {
        name: _rewrite_meta_refs(shared[_META + name]) for name in _SHARED_META
    }
    hoister = _Hoister(_META_PREFIX, {})
    hoister.lower(CONDITION, "Condition")
    condition = hoister.components["Condition"]
    status = condition["properties"]["status"]
    condition["properties"]["status"] = {
        **_ref(_META_PREFIX, "ConditionStatus"),
        "description": status["description"],
    }
    components["Condition"] = condition
    components["ConditionStatus"] = status
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
            return {**_ref(_META_PREFIX, target), **extra}
        return {
            k: _rewrite_meta_refs(v) for k, v in node.items() if not k.startswith("x-kubernetes")
        }
    if isinstance(node, list):
        return [_rewrite_meta_refs(v) for v in node]
    return node


class _Hoister:
    """Walks one kind's schema, lowering extensions and naming every object type after its path.

    A schema equal to a shared one (``shared``: schema → its name in the meta module) is not hoisted: it
    refers to the shared model, and ``aliases`` records the name it would have had here.
    """

    def __init__(self, prefix: str, shared: Mapping[str, Mapping[str, Any]]) -> None:
        self.prefix = prefix
        self.shared = shared
        self.components: dict[str, Any] = {}
        self.aliases: dict[str, str] = {}

    def lower(self, schema: Mapping[str, Any], name: str) -> dict[str, Any]:
        for shared_name, shared_schema in self.shared.items():
            if schema == shared_schema:
                self.aliases[name] = shared_name
                return _ref(_META_PREFIX, shared_name)
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
                ref = _ref(self.prefix, name)
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


@dataclass(frozen=True)
class ModelDocument:
    """What datamodel-code-generator gets for one group-version, and the names of the shared types there."""

    document: dict[str, Any]
    aliases: dict[str, str]
    """Class name a shared type had in this group-version before it was shared → its shared name
    (``CronTabStatusConditionsItem`` → ``Condition``)."""


def _document(components: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "apiforge models", "version": "generated"},
        "paths": {},
        "components": {"schemas": dict(sorted(components.items()))},
    }


def _prefixed(prefix: str, components: Mapping[str, Any]) -> dict[str, Any]:
    return {prefix + name: component for name, component in components.items()}


def meta_document() -> dict[str, Any]:
    """The OpenAPI document of the shared meta/v1 module alone."""
    return _document(_prefixed(_META_PREFIX, _meta_components()))


def model_document(kinds: Mapping[str, Mapping[str, Any]]) -> ModelDocument:
    """The OpenAPI document datamodel-code-generator gets for one group-version (kind → whole-object schema):
    its own types, and the shared ones it refers to, which go to their own module."""
    hoister = _Hoister(_GROUP_VERSION_PREFIX, {"Condition": CONDITION})
    for kind, schema in sorted(kinds.items()):
        properties = dict(schema.get("properties", {}))
        properties["metadata"] = _ref(_META_PREFIX, "ObjectMeta")
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
    components = {
        **_prefixed(_META_PREFIX, _meta_components()),
        **_prefixed(_GROUP_VERSION_PREFIX, hoister.components),
    }
    return ModelDocument(_document(components), dict(sorted(hoister.aliases.items())))
