"""The generator's templates are package data: loaded through the package (so an installed generator renders
without its repository) and part of the generation fingerprint (so editing a template re-renders)."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import jinja2
import pytest

from generator import render, toolprint


def test_templates_load_through_the_package() -> None:
    environment = render._environment()
    assert isinstance(environment.loader, jinja2.PackageLoader)
    assert "server.py.j2" in environment.list_templates()


def _copy_of_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the generator package, which importlib.resources hands the fingerprint from now on."""
    copy = tmp_path / "elsewhere" / "generator"
    original = Path(str(resources.files("generator")))
    shutil.copytree(original, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(toolprint.resources, "files", lambda package: copy)
    return copy


def test_the_fingerprint_does_not_depend_on_where_the_package_lies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed_here = toolprint.tool_fingerprint()
    _copy_of_the_package(tmp_path, monkeypatch)
    assert toolprint.tool_fingerprint() == installed_here


def test_a_template_edit_changes_the_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _copy_of_the_package(tmp_path, monkeypatch)
    before = toolprint.tool_fingerprint()
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "render.cpython-311.pyc").write_bytes(b"bytecode")
    assert toolprint.tool_fingerprint() == before  # compiled files are no input
    template = package / "templates" / "server.py.j2"
    template.write_text(template.read_text() + "# edited\n")
    assert toolprint.tool_fingerprint() != before
