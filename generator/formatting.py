"""Format the generated Python: every file of a run in one ``ruff format`` process.

The formatter was black until it was measured: over 200 synthetic kinds black took 18 s of the 62 s of CPU
a cold generation cost (0.15-0.4 s per module, two passes each, since our unformatted sources always change on
the first), so 200 kinds could not be generated in 10 s on two cores with it; ``ruff format`` formats the same
files in about 0.1 s. Its style is black's but for a few docstrings and blank lines. It is a compiled binary
shipped in the ``ruff`` wheel, so it runs as one subprocess per run, over a temporary directory, with
``--isolated`` (the project's own ruff settings never change what is generated) and ``--no-cache``.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ruff import find_ruff_bin

LINE_LENGTH = 100
TARGET_VERSION = "py311"


class FormatError(RuntimeError):
    """ruff could not format a generated module: the generator wrote invalid Python (a generator bug)."""


def format_python(sources: Mapping[str, str]) -> dict[str, str]:
    """Each source (keyed by its path relative to the output directory) formatted as the generated files are."""
    if not sources:
        return {}
    with tempfile.TemporaryDirectory(prefix="apiforge-format-") as directory:
        # Files are named by number: ruff would skip a group package called "build" or "dist" if it discovered
        # them by walking a directory, and numbers need no directories.
        files = {path: Path(directory) / f"{number}.py" for number, path in enumerate(sources)}
        for path, target in files.items():
            target.write_text(sources[path], encoding="utf-8")
        command = [
            str(find_ruff_bin()),
            "format",
            "--isolated",
            "--no-cache",
            "--quiet",
            f"--line-length={LINE_LENGTH}",
            f"--target-version={TARGET_VERSION}",
            *(str(target) for target in files.values()),
        ]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            message = result.stdout + result.stderr
            for path, target in files.items():
                message = message.replace(str(target), path)
            raise FormatError(f"ruff format failed on generated code:\n{message}")
        return {path: target.read_text(encoding="utf-8") for path, target in files.items()}
