"""Whether a kind's declared conversions are lossless: an object of the hub (storage) version converted to
each other version and back, by the version's declared moves and the pruning to its schema (a CRD without a
webhook converts that way: kube's strategy None), must come back as it was. What does not come back is lost
by a client of that version that reads and updates the object.

Versions with conversion hooks are left out: their Python functions belong to the project, which `apiforge
check` does not import."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from apiserver.machinery.convert import FieldMoves, deep_copy
from apiserver.schema.pruning import prune
from generator.definition import Definition

__all__ = ["losses"]


def _differences(before: Any, after: Any, path: str) -> Iterator[str]:
    """The fields whose values differ, empty objects counting as absent (a move leaves them behind)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            child = f"{path}.{key}" if path else key
            yield from _differences(before.get(key, {}), after.get(key, {}), child)
    elif before != after:
        yield path


def losses(definition: Definition, stored: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(version, field) for each field of ``stored`` (an object of the hub version) that a round trip
    through that version loses."""
    hub_version = definition.storage_version
    hub = deep_copy(stored)
    prune(hub, hub_version.schema)
    for version in definition.versions:
        conversion = version.conversion
        if version.storage or conversion.to_hub_hook or conversion.from_hub_hook:
            continue
        moves = tuple((move.version_path, move.hub_path) for move in conversion.moves)
        there = deep_copy(hub)
        FieldMoves(tuple((hub_path, path) for path, hub_path in moves)).apply(there)
        prune(there, version.schema)
        back = deep_copy(there)
        FieldMoves(moves).apply(back)
        prune(back, hub_version.schema)
        for field in _differences(hub, back, ""):
            yield version.name, field
