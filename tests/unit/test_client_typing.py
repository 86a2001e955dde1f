"""The typed clients type-check under ``mypy --strict`` as a program uses them (tests/typing/strict_usage.py,
whose ``assert_type`` calls make mypy prove each result is the kind's model), and mypy refuses misuse: a
model where another is due, an unknown field, a verb that does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]
USAGE = ROOT / "tests" / "typing" / "strict_usage.py"
PRELUDE = """
from apiclient import Connection
from generated.core.v1.models import ConfigMap
from generated.stable_example_com.v1.client import crontabs
from generated.stable_example_com.v1.models import CronTab
def use(connection: Connection) -> None:
    tabs = crontabs(connection)
"""


def mypy(*arguments: str) -> tuple[str, int]:
    stdout, stderr, status = api.run(
        ["--strict", "--config-file", str(ROOT / "pyproject.toml"), *arguments]
    )
    return stdout + stderr, status


def test_the_usage_file_type_checks_strictly() -> None:
    output, status = mypy(str(USAGE))
    assert status == 0, output


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('    cm: ConfigMap = tabs.get("a")', "Incompatible types in assignment"),
        ("    tabs.create(ConfigMap())", 'has incompatible type "ConfigMap"; expected "CronTab"'),
        ('    print(tabs.get("a").spec.nonexistent)', 'has no attribute "nonexistent"'),
        ('    tabs.scale_up("a")', 'has no attribute "scale_up"'),
    ],
)
def test_mypy_refuses_misuse(line: str, error: str, tmp_path: Path) -> None:
    misuse = tmp_path / "misuse.py"
    misuse.write_text(PRELUDE + line + "\n")
    output, status = mypy(str(misuse))
    assert status == 1 and error in output, output
