"""`apiforge generate` says what it does: a line per group-version as it is rendered, with its kinds and time,
then the run's outcome and total; nothing but errors with -q; `--check` only its verdict."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from apiforge.cli import main
from tests.unit.generator.onekind import write_kind

PROGRESS = re.compile(r"rendered (?P<version>\S+) \((?P<kinds>\d+) kinds?\) \d+\.\d s")
SUMMARY = re.compile(r"\d+ file\(s\) changed in \S+ \(\d+\.\d s\)")


def generate(definitions: Path, out: Path, *flags: str) -> list[str]:
    result = CliRunner().invoke(
        main, ["generate", *flags, "--definitions", str(definitions), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """A one-kind project generated once: its definitions, its output and what the run printed."""
    root = tmp_path_factory.mktemp("progress")
    write_kind(root / "definitions", "Widget")
    lines = generate(root / "definitions", root / "generated")
    return root / "definitions", root / "generated", lines


@pytest.fixture
def copy(cold: tuple[Path, Path, list[str]], tmp_path: Path) -> tuple[Path, Path]:
    definitions, out = tmp_path / "definitions", tmp_path / "generated"
    shutil.copytree(cold[0], definitions)
    shutil.copytree(cold[1], out)
    return definitions, out


def test_a_cold_run_reports_every_group_version_then_the_total(
    cold: tuple[Path, Path, list[str]],
) -> None:
    *progress, summary = cold[2]
    matches = [PROGRESS.fullmatch(line) for line in progress]
    assert all(matches), progress
    kinds = {m["version"]: int(m["kinds"]) for m in matches if m}
    assert kinds["example.com/v1"] == 1
    assert kinds["core/v1"] > 1  # the built-in kinds
    assert len(kinds) == len(progress)  # each group-version once
    assert SUMMARY.fullmatch(summary), summary


def test_an_added_kind_reports_its_group_version_only(copy: tuple[Path, Path]) -> None:
    definitions, out = copy
    write_kind(definitions, "Gadget")
    progress, summary = generate(definitions, out)
    assert (m := PROGRESS.fullmatch(progress)) and m["version"] == "example.com/v1"
    assert m["kinds"] == "2"
    assert SUMMARY.fullmatch(summary), summary


def test_quiet_prints_nothing(copy: tuple[Path, Path]) -> None:
    definitions, out = copy
    write_kind(definitions, "Gadget")
    assert generate(definitions, out, "-q") == []
    assert "class Gadget(" in (out / "example_com" / "v1" / "models.py").read_text()


def test_a_no_op_run_says_so_with_its_time(cold: tuple[Path, Path, list[str]]) -> None:
    definitions, out, _ = cold
    (line,) = generate(definitions, out)
    assert re.fullmatch(rf"{re.escape(str(out))} is up to date \(\d+\.\d s\)", line), line


def test_a_run_without_a_manifest_says_it_rendered_and_changed_nothing(
    copy: tuple[Path, Path],
) -> None:
    """A fresh clone: generated/ is committed, its manifest (the render cache's index) is not."""
    definitions, out = copy
    (out / ".manifest.json").unlink()
    *progress, summary = generate(definitions, out)
    assert progress and all(PROGRESS.fullmatch(line) for line in progress), progress
    assert re.fullmatch(
        rf"{re.escape(str(out))} is up to date: rendered {len(progress)} group-versions, no file changed"
        r" \(\d+\.\d s\)",
        summary,
    ), summary


def test_check_prints_its_verdict_only(cold: tuple[Path, Path, list[str]]) -> None:
    definitions, out, _ = cold
    (line,) = generate(definitions, out, "--check")
    assert re.fullmatch(rf"{re.escape(str(out))} is up to date \(\d+\.\d s\)", line), line
