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
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.pipeline import GenerateConfig, generate

GOLDEN = Path(__file__).parent / "golden"
SUFFIX = ".golden"
UPDATE = os.environ.get("APIFORGE_UPDATE_GOLDEN", "") not in ("", "0")
CASES = sorted(case.name for case in GOLDEN.iterdir() if case.is_dir())


@dataclass(frozen=True)
class Generated:
    case: Path  # golden/<case>
    out: Path  # where its definitions were generated


@pytest.fixture(scope="module", params=CASES)
def generated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Generated:
    """A case, its definitions generated once into a temporary directory."""
    case: Path = GOLDEN / request.param
    out = tmp_path_factory.mktemp(request.param) / "generated"
    generate(GenerateConfig(case / "definitions", out))
    return Generated(case, out)


def expected_files(case: Path) -> dict[str, Path]:
    """The case's expected files, by their path in the generated tree."""
    expected = case / "expected"
    return {
        str(path.relative_to(expected)).removesuffix(SUFFIX): path
        for path in sorted(expected.rglob(f"*{SUFFIX}"))
    }


def test_the_generated_files_are_the_expected_ones(generated: Generated) -> None:
    case, out = generated.case, generated.out
    expected = expected_files(case)
    assert expected, f"{case.name} keeps no expected file"
    for relative, golden in expected.items():
        produced = out / relative
        assert produced.is_file(), f"{case.name}: the generator no longer writes {relative}"
        if UPDATE:
            golden.write_bytes(produced.read_bytes())
            continue
        assert produced.read_text() == golden.read_text(), (
            f"{case.name}: {relative} differs from {golden.relative_to(GOLDEN)}; if the change is "
            "intended, refresh with APIFORGE_UPDATE_GOLDEN=1 (see this module's docstring)"
        )


def test_generating_again_gives_the_same_bytes(generated: Generated) -> None:
    """--check renders everything anew in memory and compares it with what the first run wrote."""
    config = GenerateConfig(generated.case / "definitions", generated.out, check=True)
    assert generate(config) == []


def test_every_case_shows_its_feature_in_a_kept_file() -> None:
    """A case is one feature: its definitions are a single small file, and it keeps at most a few files."""
    for name in CASES:
        definitions = list((GOLDEN / name / "definitions").rglob("*.yaml"))
        assert len(definitions) == 1, name
        assert 1 <= len(expected_files(GOLDEN / name)) <= 3, name
