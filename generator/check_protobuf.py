"""Protobuf numbers are complete and unique: once a kind declares one, every field of it has one and no two
fields of a message share one; and every schema node has a protobuf form (no map of maps, no untyped value)."""

from __future__ import annotations

from collections.abc import Callable

from generator.definition import Definition, JsonPath, Version
from generator.plan_protobuf import protobuf_plan

__all__ = ["check_protobuf"]


def check_protobuf(
    definition: Definition, version: Version, report: Callable[[JsonPath, str], None]
) -> None:
    """Report every protobuf problem of ``version`` at its schema path (``report`` is version-relative)."""
    for path, problem in protobuf_plan(definition, version)[1]:
        report(("schema", *path), problem)
