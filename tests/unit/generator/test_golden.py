"""Per-feature golden cases of the generator: each directory under ``golden/`` holds one feature's input
(``definitions/``) and the generated files that feature shows in (``expected/``, each named with an added
``.golden`` suffix so that linters leave generated code alone). Only the relevant files are kept, so a case
stays small and a change to one emitter fails the cases of its feature only. The whole-tree golden test is
test_pipeline.py's ``test_committed_output_is_what_generate_writes``.

After an intended change to the generated code, refresh the expected files and review the diff::

    APIFORGE_UPDATE_GOLDEN=1 pytest tests/unit/generator/test_golden.py
    git diff tests/unit/generator/golden

To add a case, write its ``definitions/``, create an empty ``expected/<path>.golden`` for each generated file
to keep, and run the update.

A case renders only the units its own definitions make (its group and group-versions: every file a case keeps is
one of theirs), never the built-in kinds beside them: a unit's files are a function of its own definitions
(generator/units.py), so they are the bytes ``apiforge generate`` writes for them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.formatting import format_python
from generator.load import load_checked
from generator.plan import build_plan
from generator.render import render_job
from generator.units import Job

GOLDEN = Path(__file__).parent / "golden"
SUFFIX = ".golden"
UPDATE = os.environ.get("APIFORGE_UPDATE_GOLDEN", "") not in ("", "0")
CASES = sorted(case.name for case in GOLDEN.iterdir() if case.is_dir())


@dataclass(frozen=True)
class Generated:
    case: Path  # golden/<case>
    jobs: list[Job]  # the units of its own definitions
    files: dict[str, str]  # what they render to, by path in the generated tree


def render_units(jobs: list[Job]) -> dict[str, str]:
    """The units' files as a run writes them: rendered, then their Python formatted all at once."""
    files = {path: text for job in jobs for path, text in render_job(job).files.items()}
    return {**files, **format_python({p: t for p, t in files.items() if p.endswith(".py")})}


@pytest.fixture(scope="module", params=CASES)
def generated(request: pytest.FixtureRequest) -> Generated:
    """A case, the units of its definitions rendered once (loaded and checked with the built-in ones)."""
    case: Path = GOLDEN / request.param
    own = [d for d in load_checked(case / "definitions") if d.source.is_relative_to(case)]
    plan = build_plan(own)
    jobs: list[Job] = [*plan.groups, *(v for group in plan.groups for v in group.versions)]
    return Generated(case, jobs, render_units(jobs))


def expected_files(case: Path) -> dict[str, Path]:
    """The case's expected files, by their path in the generated tree."""
    expected = case / "expected"
    return {
        str(path.relative_to(expected)).removesuffix(SUFFIX): path
        for path in sorted(expected.rglob(f"*{SUFFIX}"))
    }


def test_the_generated_files_are_the_expected_ones(generated: Generated) -> None:
    case = generated.case
    expected = expected_files(case)
    assert expected, f"{case.name} keeps no expected file"
    for relative, golden in expected.items():
        assert relative in generated.files, (
            f"{case.name}: the generator no longer writes {relative}"
        )
        produced = generated.files[relative]
        if UPDATE:
            golden.write_text(produced)
            continue
        assert produced == golden.read_text(), (
            f"{case.name}: {relative} differs from {golden.relative_to(GOLDEN)}; if the change is "
            "intended, refresh with APIFORGE_UPDATE_GOLDEN=1 (see this module's docstring)"
        )


def test_rendering_again_gives_the_same_bytes(generated: Generated) -> None:
    """What --check relies on: the same units render to the same text every time."""
    assert render_units(generated.jobs) == generated.files


def test_every_case_shows_its_feature_in_a_kept_file() -> None:
    """A case is one feature: its definitions are a single small file, and it keeps at most a few files."""
    for name in CASES:
        definitions = list((GOLDEN / name / "definitions").rglob("*.yaml"))
        assert len(definitions) == 1, name
        assert 1 <= len(expected_files(GOLDEN / name)) <= 3, name
