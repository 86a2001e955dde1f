"""Uniqueness of ``x-kubernetes-list-type: set`` items and ``map`` keys.

A port of apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go. Only the first repeated
occurrence of a value is reported (at its index), and a map item without a key field counts as having
an "unspecified" key, so two keyless items collide. Scalars compare by type and value (``1`` and ``1.0``
differ, as int64 and float64 do in Go); objects and arrays compare by their JSON encoding.
"""

from __future__ import annotations

from typing import Any

from apiserver.schema import causes
from apiserver.schema.causes import Cause, go_json
from apiserver.schema.structural import Schema

__all__ = ["validate_list_types"]


def validate_list_types(obj: Any, schema: Schema) -> list[Cause]:
    """Causes for every list-type set or map in ``obj`` that repeats a value or key."""
    errs: list[Cause] = []
    if isinstance(obj, dict) and schema.has_list_types_below:
        _object(obj, schema, "", errs)
    return errs


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _object(obj: dict[str, Any], s: Schema, path: str, errs: list[Cause]) -> None:
    # ValidateListSetsAndMaps: additionalProperties values are keyed ("[key]"), properties are children.
    ap = s.additional_properties
    if ap is not None and (ap.list_type is not None or ap.has_list_types_below):
        for key, value in obj.items():
            _value(value, ap, f"{path}[{key}]", errs)
    if s.properties:
        for key, value in obj.items():
            prop = s.properties.get(key)
            if prop is not None and (prop.list_type is not None or prop.has_list_types_below):
                _value(value, prop, _child(path, key), errs)


def _value(value: Any, s: Schema, path: str, errs: list[Cause]) -> None:
    if isinstance(value, list):
        _array(value, s, path, errs)
    elif isinstance(value, dict):
        _object(value, s, path, errs)


def _array(items: list[Any], s: Schema, path: str, errs: list[Cause]) -> None:
    if s.list_type == "set":
        for i in _repeated(items):
            errs.append(causes.duplicate(f"{path}[{i}]", items[i]))
    elif s.list_type == "map":
        errs.extend(_map_list(items, s, path))
    item_schema = s.items
    if item_schema is not None and (
        item_schema.list_type is not None or item_schema.has_list_types_below
    ):
        for i, item in enumerate(items):
            _value(item, item_schema, f"{path}[{i}]", errs)


class _Unspecified:
    """The key of a map-list item that lacks the key field (Go's ``unspecifiedKeyValue{}``)."""


_UNSPECIFIED = _Unspecified()


def _map_list(items: list[Any], s: Schema, path: str) -> list[Cause]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [
                causes.invalid(
                    f"{path}[{i}]", item, "must be an object for an array of list-type map"
                )
            ]
    if len(items) <= 1:
        return []
    if len(s.list_map_keys) == 1:
        key_field = s.list_map_keys[0]
        keys: list[Any] = [
            item[key_field] if isinstance(item, dict) and key_field in item else _UNSPECIFIED
            for item in items
        ]
        errs = []
        for i in _repeated(keys):
            shown = {} if keys[i] is _UNSPECIFIED else {key_field: keys[i]}
            errs.append(causes.duplicate(f"{path}[{i}]", shown))
        return errs
    composite = [
        {k: item[k] for k in s.list_map_keys if k in item} if isinstance(item, dict) else {}
        for item in items
    ]
    return [causes.duplicate(f"{path}[{i}]", composite[i]) for i in _repeated(composite)]


def _identity(value: Any) -> Any:
    if isinstance(value, dict | list):
        return ("json", go_json(value))
    if value is _UNSPECIFIED:
        return ("unspecified",)
    return (type(value).__name__, value)


def _repeated(values: list[Any]) -> list[int]:
    """Indexes of the second occurrence of each repeated value (validateListSet)."""
    if len(values) <= 1:
        return []
    seen: dict[Any, int] = {}
    repeated: list[int] = []
    for i, value in enumerate(values):
        key = _identity(value)
        times = seen.get(key, 0)
        seen[key] = times + 1
        if times == 1:
            repeated.append(i)
    return repeated
