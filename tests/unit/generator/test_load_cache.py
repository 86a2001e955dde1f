"""The build cache of loaded and checked definitions (generator/load_cache.py): a run loads and checks only the
files it has not seen, yet reports every error as a run without the cache does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from generator import load_cache
from generator.definition import DefinitionErrors
from generator.load import load_checked
from generator.load_cache import FileEntry, checked_definitions
from tests.unit.generator.onekind import WIDGET, write_kind


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files loaded and checked afresh from now on."""
    seen: list[Path] = []
    real: Callable[[Path, bytes, Path], FileEntry | None] = load_cache._loaded_file

    def spy(file: Path, data: bytes, portable: Path) -> FileEntry | None:
        seen.append(file)
        return real(file, data, portable)

    monkeypatch.setattr(load_cache, "_loaded_file", spy)
    return seen


def test_a_run_loads_only_the_files_it_has_not_seen(tmp_path: Path, loaded: list[Path]) -> None:
    write_kind(tmp_path, "Widget")
    first = checked_definitions(tmp_path, {})
    assert tmp_path / "example.com" / "widget.yaml" in loaded
    loaded.clear()
    gadget = write_kind(tmp_path, "Gadget")
    second = checked_definitions(tmp_path, first.files)
    assert loaded == [gadget]
    uncached = checked_definitions(tmp_path, None)  # what --check does
    assert [(d.kind, second.digest(d)) for d in second.definitions] == [
        (d.kind, uncached.digest(d)) for d in uncached.definitions
    ]


def test_an_edited_file_is_loaded_again(tmp_path: Path, loaded: list[Path]) -> None:
    widget = write_kind(tmp_path, "Widget")
    first = checked_definitions(tmp_path, {})
    loaded.clear()
    widget.write_text(WIDGET.replace("size: integer", "size: string"))
    second = checked_definitions(tmp_path, first.files)
    assert loaded == [widget]
    (definition,) = [d for d in second.definitions if d.kind == "Widget"]
    assert definition.versions[0].schema["properties"]["spec"]["properties"]["size"] == {
        "type": "string"
    }


def test_an_invalid_file_is_reported_as_a_run_without_the_cache_reports_it(tmp_path: Path) -> None:
    widget = write_kind(tmp_path, "Widget")
    write_kind(tmp_path, "Gadget")
    first = checked_definitions(tmp_path, {})
    widget.write_text(WIDGET.replace("size: integer", "size: integr"))
    with pytest.raises(DefinitionErrors) as cached:
        checked_definitions(tmp_path, first.files)
    with pytest.raises(DefinitionErrors) as cold:
        load_checked(tmp_path)
    assert [str(e) for e in cached.value.errors] == [str(e) for e in cold.value.errors]
    assert 'did you mean "integer"?' in str(cached.value.errors[0])


def test_a_new_file_that_claims_a_cached_kind_is_refused(tmp_path: Path) -> None:
    """The checks between definitions run over cached and new files alike."""
    write_kind(tmp_path, "Widget")
    first = checked_definitions(tmp_path, {})
    (tmp_path / "again.yaml").write_text(WIDGET)
    with pytest.raises(DefinitionErrors) as caught:
        checked_definitions(tmp_path, first.files)
    assert 'kind "Widget" of group example.com is already claimed by Widget' in str(caught.value)


def test_another_version_of_the_checks_runtime_loads_every_file_again(
    tmp_path: Path, loaded: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks call apiserver.schema (validation, defaulting, CEL): a change there can change a verdict."""
    write_kind(tmp_path, "Widget")
    first = checked_definitions(tmp_path, {})
    count = len(loaded)
    real = load_cache.package_digest
    monkeypatch.setattr(
        load_cache, "package_digest", lambda name: real(name) + ("x" if "schema" in name else "")
    )
    checked_definitions(tmp_path, first.files)
    assert len(loaded) == 2 * count


def test_an_entry_that_does_not_read_back_is_loaded_again(
    tmp_path: Path, loaded: list[Path]
) -> None:
    write_kind(tmp_path, "Widget")
    first = checked_definitions(tmp_path, {})
    count = len(loaded)
    garbled = {key: "not a pickle" for key in first.files}
    again = checked_definitions(tmp_path, garbled)
    assert len(loaded) == 2 * count
    assert again.files == first.files
