"""Schema defaults for custom resources, applied the way kube-apiserver applies them.

Ports of apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go (``Default``) and
prunenulls.go (``PruneNonNullableNullsWithoutDefaults``). The apiserver runs them in this order when it
decodes a custom resource: prune unknown fields, drop nulls that the schema does not allow and has no
default for (:func:`prune_nulls`), then fill in defaults (:func:`apply_defaults`).

Defaults only fill members missing from objects that exist: a default for ``spec.replicas`` applies when
``spec`` is present, never creating ``spec`` itself (unless ``spec`` has its own default). A null member
of a non-nullable field counts as missing. Defaults are copied, so objects never share them. Objects
under ``x-kubernetes-preserve-unknown-fields`` are defaulted only where the schema declares properties.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from apiserver.schema.structural import MISSING, Schema, compile_schema

__all__ = ["apply_defaults", "has_members", "prune_nulls"]


def _copy(value: Any) -> Any:
    # runtime.DeepCopyJSONValue: defaults are JSON, so dicts and lists are all there is to copy.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def apply_defaults(obj: Any, schema: Mapping[str, Any] | Schema) -> None:
    """Fill in, in place, the ``default`` of every schema property missing from ``obj``."""
    _default(obj, compile_schema(schema))


def _default(x: Any, s: Schema) -> None:
    if isinstance(x, dict):
        for key, prop in s.properties_with_defaults:
            if key not in x or (x[key] is None and not prop.nullable):
                x[key] = _copy(prop.default)
        if not s.has_defaults_below:
            return
        props = s.properties
        additional = s.additional_properties
        for key, value in x.items():
            child = props.get(key)
            if child is not None:
                if child.has_defaults_below:
                    _default(value, child)
            elif additional is not None:
                if value is None and not additional.nullable and additional.default is not MISSING:
                    x[key] = value = _copy(additional.default)
                if additional.has_defaults_below:
                    _default(value, additional)
    elif isinstance(x, list):
        items = s.items
        if items is None:
            return
        if items.default is not MISSING and not items.nullable:
            for i, value in enumerate(x):
                if value is None:
                    x[i] = _copy(items.default)
        if items.has_defaults_below:
            for value in x:
                _default(value, items)


def prune_nulls(obj: Any, schema: Mapping[str, Any] | Schema) -> None:
    """Remove, in place, null members whose schema is neither nullable nor defaulted.

    Members without a schema (unknown fields under ``x-kubernetes-preserve-unknown-fields``) are kept,
    and so are nulls with a default: :func:`apply_defaults` replaces those.
    """
    _null_pruner(compile_schema(schema))(obj)


Pruner = Callable[[Any], None]
_CONTAINERS: Final = (dict, list)
"""A tuple, not ``dict | list``: the union would be built anew at every member."""


def _droppable(s: Schema) -> bool:
    """A null member of this schema goes: neither nullable nor defaulted."""
    return not s.nullable and s.default is MISSING


def has_members(s: Schema) -> bool:
    """Whether anything inside a value of this schema has a schema of its own (else nothing in it goes)."""
    return bool(s.properties) or s.additional_properties is not None or s.items is not None


def _null_pruner(s: Schema) -> Pruner:
    """The drop of nulls for values of ``s``, compiled once per schema node and kept on it: this runs on
    every write, so which members may go and which to walk into are decided here, not per member."""
    pruner = s.null_pruner
    if pruner is None:
        pruner = s.null_pruner = _compile_null_pruner(s)
    return pruner  # type: ignore[no-any-return]


def _compile_null_pruner(s: Schema) -> Pruner:
    props = s.properties
    droppable = frozenset(key for key, prop in props.items() if _droppable(prop))
    # a declared member's walker (None: nothing inside it can go); an undeclared one's is ``other``
    children = {
        key: _null_pruner(prop) if has_members(prop) else None for key, prop in props.items()
    }
    additional = s.additional_properties
    other = _null_pruner(additional) if additional is not None and has_members(additional) else None
    other_droppable = additional is not None and _droppable(additional)
    items = _null_pruner(s.items) if s.items is not None and has_members(s.items) else None

    def prune(x: Any) -> None:
        if isinstance(x, dict):
            doomed: list[str] = []
            for key, value in x.items():
                if value is None:
                    if key in droppable or (other_droppable and key not in props):
                        doomed.append(key)
                elif isinstance(value, _CONTAINERS):
                    walk = children.get(key, other)
                    if walk is not None:
                        walk(value)
            for key in doomed:
                del x[key]
        elif isinstance(x, list) and items is not None:
            for value in x:
                if isinstance(value, _CONTAINERS):
                    items(value)

    return prune
