"""CI (`.ci/run`) runs `make test`, which must fail on a stale generated/ or a lint error before any test runs:
`make -n` (a dry run, which still walks the recursive makes) shows the commands in the order they would run."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.serverproc import REPO


def test_make_test_checks_generated_and_lints_before_the_tests(tmp_path: Path) -> None:
    assert (REPO / ".ci" / "run").read_text().rstrip().endswith("\nmake test")
    # a stamp newer than pyproject.toml, so that the dry run plans no virtualenv; never a makefile, which
    # make would really remake (create the virtualenv) even in a dry run
    stamp = tmp_path / "installed"
    stamp.touch()
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "test", f"STAMP={stamp}", "BIN=/venv/bin"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    commands = [line for line in dry_run.stdout.splitlines() if line.startswith("/venv/bin/")]
    assert commands == [
        "/venv/bin/apiforge generate --definitions definitions --out generated --check",
        "/venv/bin/ruff check .",
        "/venv/bin/ruff format --check .",
        "/venv/bin/mypy",
        "/venv/bin/pytest -q -n 2",
    ]
