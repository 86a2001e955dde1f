"""A small CRD schema exercising every ownership rule (imported by the tests as a plain module)."""

from __future__ import annotations

from typing import Any

WIDGET_GV = "example.com/v1"

WIDGET: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "image": {"type": "string"},
                "paused": {"type": "boolean"},
                # No list type: atomic, owned as a whole.
                "args": {"type": "array", "items": {"type": "string"}},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"},
                            "name": {"type": "string"},
                        },
                    },
                },
                "containers": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "image": {"type": "string"},
                            "env": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                            },
                        },
                    },
                },
                "selector": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"},
                },
                "config": {"type": "object", "additionalProperties": {"type": "string"}},
                "template": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {"phase": {"type": "string"}, "ready": {"type": "integer"}},
        },
    },
}

CONFIGMAP_GV = "v1"

# The parts of a core/v1 ConfigMap kube's apply integration tests use.
CONFIGMAP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "data": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


def widget(spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": WIDGET_GV,
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", **meta},
    }
    if spec is not None:
        obj["spec"] = spec
    return obj
