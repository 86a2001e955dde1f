"""Whether a kind's declared conversions are lossless: an object of the hub (storage) version converted to
each other version and back must come back as it was. What does not come back is lost by a client of that
version that reads and updates the object.

A conversion runs as the generated converters run it (generator/templates/conversion.py.j2): to the hub, the
version's declared moves then its ``toHub`` hook; from the hub, the ``fromHub`` hook then the inverse moves;
what a hook returns, and what a CRD without a webhook converts (kube's strategy None), is pruned to the
target's schema. Hooks are the project's Python functions, imported from the directory `apiforge check` runs
in, as `apiforge serve` imports them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from apiserver.machinery.convert import FieldMoves, deep_copy
from apiserver.schema.pruning import prune
from generator.definition import Definition, Version

__all__ = ["Hook", "HookFailed", "import_hook", "losses"]

Hook = Callable[[dict[str, Any]], dict[str, Any]]


class HookFailed(Exception):
    """A version's conversion hook could not be imported, or raised: its round trip is not known."""

    def __init__(self, version: str, reason: str) -> None:
        self.version = version
        self.reason = reason
        super().__init__(f"{version}: {reason}")


def import_hook(reference: str) -> Hook:
    """The function a ``package.module:function`` reference names, importable from the current directory;
    raises ImportError or AttributeError."""
    module, _, name = reference.partition(":")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    hook: Hook = getattr(importlib.import_module(module), name)
    return hook


def _differences(before: Any, after: Any, path: str) -> Iterator[str]:
    """The fields whose values differ, empty objects counting as absent (a move leaves them behind)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            child = f"{path}.{key}" if path else key
            yield from _differences(before.get(key, {}), after.get(key, {}), child)
    elif before != after:
        yield path


def _api_version(definition: Definition, version: Version) -> str:
    return f"{definition.group}/{version.name}" if definition.group else version.name


def _there_and_back(
    definition: Definition, version: Version, hub: dict[str, Any], resolve: Callable[[str], Hook]
) -> dict[str, Any]:
    conversion = version.conversion
    moves = tuple((move.version_path, move.hub_path) for move in conversion.moves)
    there = deep_copy(hub)
    if conversion.from_hub_hook:
        there = resolve(conversion.from_hub_hook)(there)
    FieldMoves(tuple((hub_path, path) for path, hub_path in moves)).apply(there)
    there["apiVersion"] = _api_version(definition, version)
    prune(there, version.schema)
    back = deep_copy(there)
    FieldMoves(moves).apply(back)
    back["apiVersion"] = hub["apiVersion"]
    if conversion.to_hub_hook:
        back = resolve(conversion.to_hub_hook)(back)
    prune(back, definition.storage_version.schema)
    return back


def losses(
    definition: Definition, stored: dict[str, Any], resolve: Callable[[str], Hook] = import_hook
) -> Iterator[tuple[str, str]]:
    """(version, field) for each field of ``stored`` (an object of the hub version) that a round trip
    through that version loses. Raises HookFailed for a hook that cannot be imported or raises."""
    hub_version = definition.storage_version
    hub = deep_copy(stored)
    hub["apiVersion"] = _api_version(definition, hub_version)
    prune(hub, hub_version.schema)
    for version in definition.versions:
        if version.storage:
            continue
        try:
            back = _there_and_back(definition, version, hub, resolve)
        except Exception as error:  # the project's own hook code: any failure is its report
            raise HookFailed(version.name, f"{type(error).__name__}: {error}") from error
        for field in _differences(hub, back, ""):
            yield version.name, field
