"""The README's "Typed clients" section runs as written: its Python blocks, in order, as one program in a
directory whose `.apiforge-data` is a real server's data directory, printing what their comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.serverproc import REPO, ServerProcess


def python_blocks(title: str) -> list[str]:
    """The Python blocks of the README section headed ``title`` (up to the next second-level heading)."""
    readme = (REPO / "README.md").read_text()
    section = readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_typed_client_blocks_run_as_written(server: ServerProcess, tmp_path: Path) -> None:
    blocks = python_blocks("Typed clients")
    assert len(blocks) == 3
    (tmp_path / ".apiforge-data").symlink_to(server.data_dir)
    result = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "report:1",
        "{'replicas': 2}",
        "added nightly",
        "['nightly']",
    ]
