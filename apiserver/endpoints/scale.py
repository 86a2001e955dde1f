"""The scale subresource: an autoscaling/v1 Scale view of a resource, read and written through the paths its
definition declares (CRD ``subresources.scale`` semantics)."""

from __future__ import annotations

from typing import Any

from apiserver.endpoints.decode import Target
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ScaleSpec


def _path(dotted: str) -> list[str]:
    return [p for p in dotted.split(".") if p]


def _get(obj: Object, dotted: str) -> Any:
    value: Any = obj
    for key in _path(dotted):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _set(obj: Object, dotted: str, value: Any) -> None:
    keys = _path(dotted)
    parent = obj
    for key in keys[:-1]:
        child = parent.get(key)
        if not isinstance(child, dict):
            child = parent[key] = {}
        parent = child
    parent[keys[-1]] = value


def scale_of(obj: Object, spec: ScaleSpec) -> Object:
    metadata = obj.get("metadata", {})
    status: Object = {"replicas": _get(obj, spec.status_replicas_path) or 0}
    if spec.label_selector_path:
        selector = _get(obj, spec.label_selector_path)
        if selector:
            status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            key: metadata[key]
            for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if key in metadata
        },
        "spec": {"replicas": _get(obj, spec.spec_replicas_path) or 0},
        "status": status,
    }


def apply_scale(obj: Object, scale: Object, spec: ScaleSpec, target: Target) -> Object:
    """Write a desired Scale's replicas back into the object; its resourceVersion stays a precondition."""
    if isinstance(scale, dict):
        for field in ("spec", "metadata"):
            if not isinstance(scale.get(field) or {}, dict):
                raise errors.bad_request(
                    f'Scale in version "v1" cannot be handled as a Scale: {field} must be an object'
                )
    replicas = (scale.get("spec") or {}).get("replicas") if isinstance(scale, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        cause = errors.StatusCause(
            "FieldValueInvalid",
            f"Invalid value: {replicas!r}: must be greater than or equal to 0",
            "spec.replicas",
        )
        raise errors.invalid("Scale", "autoscaling", target.name, [cause])
    _set(obj, spec.spec_replicas_path, replicas)
    wanted = (scale.get("metadata") or {}).get("resourceVersion")
    if wanted:
        obj["metadata"]["resourceVersion"] = wanted
    return obj
