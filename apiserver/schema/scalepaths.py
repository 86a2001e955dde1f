"""What kube checks of a custom resource's scale paths on every write, beyond its schema: the replicas that
``specReplicasPath`` and ``statusReplicasPath`` name must be int32s that are not negative, and the
``labelSelectorPath`` a string, because the scale subresource reads them (kube's ValidateScaleSpec and
ValidateScaleStatus, staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/validator.go).
An absent value passes. The field of each cause is the path as the CRD writes it, leading dot included."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

from apiserver.machinery.scheme import ScaleSpec
from apiserver.schema.causes import Cause, go_value, invalid

__all__ = ["scale_causes", "scale_spec_causes", "scale_status_causes"]

MAX_INT32 = 2**31 - 1
_ABSENT: Final = object()
"""What a path reads when it ends early: nothing to check."""
_ODD: Final = object()
"""What a path reads through a member that is not an object: the accessor's words are needed."""
_PLANS_CAPACITY: Final = 256
_plans: dict[int, tuple[ScaleSpec, Callable[[dict[str, Any]], bool]]] = {}
"""By a ScaleSpec's id: the spec and its one-call check of a write that passes."""


class _AccessorError(Exception):
    """unstructured.NestedFieldNoCopy's and NestedInt64's error, worded as theirs."""


def scale_causes(obj: dict[str, Any], scale: ScaleSpec | None, spec: bool) -> list[Cause]:
    """kube's ValidateScaleSpec (unless ``spec`` is False: a write of the status subresource), then its
    ValidateScaleStatus. A write whose replicas and selector are absent or in range, nearly every one, is
    passed by one check compiled per ScaleSpec."""
    if scale is None:
        return []
    plan = _plans.get(id(scale))
    if plan is None or plan[0] is not scale:
        if len(_plans) >= _PLANS_CAPACITY:
            _plans.clear()
        plan = _plans[id(scale)] = (scale, _passes(scale))
    if plan[1](obj):
        return []
    causes = scale_spec_causes(obj, scale) if spec else []
    causes.extend(scale_status_causes(obj, scale))
    return causes


def _passes(scale: ScaleSpec) -> Callable[[dict[str, Any]], bool]:
    """Whether neither the spec's nor the status's checks can find anything in a write."""
    spec_replicas = _reader(scale.spec_replicas_path)
    status_replicas = _reader(scale.status_replicas_path)
    selector = _reader(scale.label_selector_path) if scale.label_selector_path else None

    def passes(obj: dict[str, Any]) -> bool:
        replicas = spec_replicas(obj)
        if replicas is not _ABSENT and not (type(replicas) is int and 0 <= replicas <= MAX_INT32):
            return False
        replicas = status_replicas(obj)
        if replicas is not _ABSENT and not (type(replicas) is int and 0 <= replicas <= MAX_INT32):
            return False
        return selector is None or (value := selector(obj)) is _ABSENT or type(value) is str

    return passes


def _reader(path: str) -> Callable[[dict[str, Any]], Any]:
    """The value at ``path``; _ABSENT where ``_nested`` finds none, _ODD where it would raise."""
    fields = _fields(path)
    if len(fields) == 2:  # `.spec.replicas`, as nearly every CRD writes it: no loop
        outer, inner = fields

        def read_member(obj: dict[str, Any]) -> Any:
            parent = obj.get(outer)
            if type(parent) is dict:
                return parent.get(inner, _ABSENT)
            return _ABSENT if parent is None else _ODD

        return read_member

    def read(obj: dict[str, Any]) -> Any:
        value: Any = obj
        for name in fields:
            if value is None:
                return _ABSENT
            if type(value) is not dict:
                return _ODD
            value = value.get(name, _ABSENT)
            if value is _ABSENT:
                return _ABSENT
        return value

    return read


def scale_spec_causes(obj: dict[str, Any], scale: ScaleSpec | None) -> list[Cause]:
    """kube's ValidateScaleSpec: the replicas ``specReplicasPath`` names."""
    return _replicas(obj, scale.spec_replicas_path) if scale else []


def scale_status_causes(obj: dict[str, Any], scale: ScaleSpec | None) -> list[Cause]:
    """kube's ValidateScaleStatus: the replicas ``statusReplicasPath`` names, and the label selector."""
    if scale is None:
        return []
    causes = _replicas(obj, scale.status_replicas_path)
    if scale.label_selector_path:
        try:
            _nested(obj, scale.label_selector_path, str, "string")
        except _AccessorError as error:
            causes.append(invalid(scale.label_selector_path, "", str(error)))
    return causes


def _replicas(obj: dict[str, Any], path: str) -> list[Cause]:
    try:
        replicas = _nested(obj, path, int, "int64")
    except _AccessorError as error:
        return [invalid(path, 0, str(error))]
    if replicas is None:
        return []
    if replicas < 0:
        return [invalid(path, replicas, "should be a non-negative integer")]
    if replicas > MAX_INT32:
        return [invalid(path, replicas, f"should be less than or equal to {MAX_INT32}")]
    return []


def _nested(obj: dict[str, Any], path: str, kind: type, go_type: str) -> Any:
    """The value at the dotted ``path`` (None when absent), of Python type ``kind``; else _AccessorError
    (k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/helpers.go)."""
    fields = _fields(path)
    value: Any = obj
    for end, name in enumerate(fields, 1):
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _AccessorError(_accessor_error(fields[:end], value, "map[string]interface{}"))
        if name not in value:
            return None
        value = value[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _AccessorError(_accessor_error(fields, value, go_type))
    return value


@functools.lru_cache(maxsize=256)
def _fields(path: str) -> tuple[str, ...]:
    """The names of a dotted path, split once per path (a kind's scale paths are asked on every write)."""
    return tuple(path.removeprefix(".").split("."))


def _accessor_error(fields: tuple[str, ...], value: Any, expected: str) -> str:
    path = "." + ".".join(fields)
    return f"{path} accessor error: {_go_v(value)} is of the type {_go_type(value)}, expected {expected}"


def _go_v(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(_go_v(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    return go_value(value)


def _go_type(value: Any) -> str:
    """Go's ``%T`` of a decoded JSON value (unstructured content: integers are int64)."""
    if value is None:
        return "<nil>"
    names = {bool: "bool", int: "int64", float: "float64", str: "string", list: "[]interface {}"}
    return names.get(type(value), "map[string]interface {}")
