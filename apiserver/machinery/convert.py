"""Helpers the generated converters call: copying an object and moving one field between paths."""

from __future__ import annotations

from typing import Any

import orjson


def deep_copy(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON object; a JSON round trip is several times faster than ``copy.deepcopy``."""
    copied: dict[str, Any] = orjson.loads(orjson.dumps(obj))
    return copied


def move_field(obj: dict[str, Any], source: tuple[str, ...], target: tuple[str, ...]) -> None:
    """Move the value at ``source`` to ``target`` in place, creating target parents only when a value moves."""
    parent: Any = obj
    for key in source[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
        if parent is None:
            return
    if not isinstance(parent, dict) or source[-1] not in parent:
        return
    value = parent.pop(source[-1])
    destination = obj
    for key in target[:-1]:
        nested = destination.get(key)
        if not isinstance(nested, dict):
            nested = destination[key] = {}
        destination = nested
    destination[target[-1]] = value
