"""The IR of one version's converters: its declared renames in each direction, and the parents each direction
leaves behind that the target version does not have (the runtime removes them when a move empties them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.check_conversion import preserved, schema_fields
from generator.definition import Definition, Version

FieldPath = tuple[str, ...]


@dataclass(frozen=True)
class Direction:
    """What ``apiserver.machinery.convert.FieldMoves`` is built from for one direction."""

    moves: tuple[tuple[FieldPath, FieldPath], ...]
    vacated: tuple[FieldPath, ...]


def vacated_parents(
    sources: list[FieldPath], target_schema: dict[str, Any]
) -> tuple[FieldPath, ...]:
    """The parents of ``sources`` that ``target_schema`` lacks, deepest first (then by path, for stable output).

    Such a parent left in place by a move would be a field the target version does not have (``spec.customer``
    after ``spec.customer.name`` moved to ``spec.customerName``). Parents under a node that keeps unknown
    fields are not listed: the target keeps whatever is there.
    """
    fields = schema_fields(target_schema)
    parents = {
        source[:end]
        for source in sources
        for end in range(1, len(source))
        if source[:end] not in fields and not preserved(source[:end], fields)
    }
    return tuple(sorted(parents, key=lambda path: (-len(path), path)))


def directions(definition: Definition, version: Version) -> tuple[Direction, Direction]:
    """(version → hub, hub → version) for a non-hub ``version`` of ``definition``."""
    hub = definition.storage_version
    to_hub = tuple((m.version_path, m.hub_path) for m in version.conversion.moves)
    from_hub = tuple((m.hub_path, m.version_path) for m in version.conversion.moves)
    return (
        Direction(to_hub, vacated_parents([source for source, _ in to_hub], hub.schema)),
        Direction(from_hub, vacated_parents([source for source, _ in from_hub], version.schema)),
    )
