"""Where a run's definition files are: the project's and the built-in ones. Light on purpose (nothing of the
loader or the checks imported), so the build cache can list and hash the inputs without loading them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["builtin_definitions", "definition_files"]


def definition_files(directory: Path) -> list[Path]:
    """``directory/**/*.yaml`` and ``*.yml``, in sorted path order (so output never depends on the file system)."""
    return sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def builtin_definitions() -> Path:
    """The definitions of the kinds every server has (core/v1 Namespace, ConfigMap, Secret, Service, Event, the
    access reviews), shipped with the `builtin` package that holds their behaviour, as kube-apiserver always
    serves its own kinds: a project's definitions add to them. Found as package data, not imported."""
    spec = importlib.util.find_spec("builtin")
    assert spec is not None and spec.submodule_search_locations, (
        "the builtin package is not installed"
    )
    return Path(next(iter(spec.submodule_search_locations))) / "definitions"
