"""`apiforge --version` names the installed distribution's version, as the console script runs it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

from click.testing import CliRunner

from apiforge.cli import main


def test_version_is_the_distributions() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"apiforge {version('apiforge')}\n"


def test_version_from_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "apiforge", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["apiforge", version("apiforge")]
