"""A throwaway project of kinds whose versions move fields into and out of nested objects (conversion tests):
its definitions, generating it, and loading its generated resources in this process."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from apiserver.machinery.scheme import ResourceType
from generator.definition import Definition
from generator.load import load_definitions
from generator.naming import group_package
from generator.pipeline import GenerateConfig, generate

DEFINITIONS = Path(__file__).parent / "definitions"
GROUP = "moves.example.com"

FieldPath = tuple[str, ...]

SAMPLES: list[tuple[str, str, dict[str, Any], tuple[str, ...]]] = [
    (
        "orders",
        "v1",
        {"spec": {"customerName": "Ada", "city": "London", "total": 3}},
        ("v1", "v1beta1", "v2"),
    ),
    (
        "orders",
        "v2",
        {"spec": {"customer": {"name": "Bo", "address": {"city": "Oslo"}}, "total": 9}},
        ("v1", "v1beta1", "v2"),
    ),
    (
        "parcels",
        "v1beta1",
        {
            "spec": {
                "recipient": {"name": "Cy", "note": "back door", "address": {"city": "Rome"}},
                "tag": {"text": "fragile", "color": "red"},
                "weight": 2,
            }
        },
        ("v1", "v1beta1"),
    ),
    (
        "tickets",
        "v1alpha1",
        {"spec": {"summary": "disk full", "level": "7"}},
        ("v1", "v1alpha1"),
    ),
]
"""An object of each kind (plural, the version it is written in, its spec, the versions it reads back in):
shapes that exercise every declared move and hook."""
KINDS: dict[str, str] = {"orders": "Order", "parcels": "Parcel", "tickets": "Ticket"}


def definitions() -> list[Definition]:
    """The project's definitions, loaded without generating (enough to parametrize tests)."""
    return [d for d in load_definitions(DEFINITIONS) if d.group == GROUP]


def generate_project(root: Path) -> Path:
    """Copy the definitions into ``root`` and generate ``root/generated``; returns ``root``."""
    shutil.copytree(DEFINITIONS, root / "definitions")
    generate(GenerateConfig(root / "definitions", root / "generated"))
    return root


def load_resources(root: Path, alias: str) -> tuple[ResourceType, ...]:
    """The resources of the generated project under ``root``, imported as package ``alias``.

    The generated package is called ``generated`` like the repository's; importing it under another name keeps
    both in one process (its modules import each other relatively).
    """
    package = root / "generated"
    spec = importlib.util.spec_from_file_location(
        alias, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    spec.loader.exec_module(module)
    rest: ModuleType = importlib.import_module(f"{alias}.{group_package(GROUP)}.rest")
    resources: tuple[ResourceType, ...] = rest.RESOURCES
    return resources


def move_parents(definition: Definition) -> set[FieldPath]:
    """Every parent of a path a version's renames name, in either version: where a move may leave or create
    an empty object."""
    return {
        path[:end]
        for version in definition.versions
        for move in version.conversion.moves
        for path in (move.version_path, move.hub_path)
        for end in range(1, len(path))
    }
