"""The README's "Changing the API safely, and its reference" runs as written, in a git checkout of the
shipped definitions: the check finds the tightened bound where the README says, in text and JSON, and the
reference is written from the restored definitions."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.serverproc import REPO
from tests.shipped import copy_shipped_definitions

pytestmark = pytest.mark.timeout(120)

TITLE = "Changing the API safely, and its reference"


def section(title: str) -> str:
    readme = (REPO / "README.md").read_text()
    return re.split(r"\n#+ ", readme.split(f"\n## {title}\n", 1)[1], maxsplit=1)[0]


def git(work: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=work, check=True
    )


def test_the_evolution_example_runs_as_written(tmp_path: Path) -> None:
    text = section(TITLE)
    (script,) = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    (expected,) = re.findall(r"```text\n(.*?)```", text, re.DOTALL)
    work = tmp_path / "work"
    copy_shipped_definitions(work / "definitions")
    (work / ".venv").symlink_to(REPO / ".venv")
    git(work, "init", "-q")
    git(work, "add", "definitions")
    git(work, "commit", "-qm", "the API as released")

    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=100,
        env={**os.environ, "PYTHONPATH": ""},
    )

    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    # v1's finding is the README's line; v1beta1's bound tightened too
    assert printed[0] == expected.strip()
    assert printed[1].startswith(
        "definitions/stable.example.com/crontab.yaml:59: breaking: validation-tightened: "
        "CronTab.stable.example.com/v1beta1: spec.replicas: minimum changed from 0 to 1"
    )
    assert printed[2] == "exit 1"
    findings = json.loads((work / "findings.json").read_text())
    assert [(f["version"], f["field"], f["line"]) for f in findings] == [
        ("v1", "spec.replicas", 42),
        ("v1beta1", "spec.replicas", 59),
    ]
    page = (work / "api-reference" / "stable.example.com.md").read_text()
    assert "| spec.replicas | integer |  |  | minimum: 0 |" in page  # the restored bound
    assert (work / "api-reference" / "index.html").read_text().startswith("<!DOCTYPE html>")
