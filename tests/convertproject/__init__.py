"""A throwaway project of kinds whose versions move fields into and out of nested objects (conversion tests):
its definitions, generating it, and loading its generated resources in this process."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

from apiserver.machinery.scheme import ResourceType
from generator.definition import Definition
from generator.load import load_definitions
from generator.naming import group_package
from generator.pipeline import GenerateConfig, generate

DEFINITIONS = Path(__file__).parent / "definitions"
GROUP = "moves.example.com"

FieldPath = tuple[str, ...]


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
