"""The README's "Typed clients" section runs as written: its Python blocks, in order, as one program in a
directory whose `.apiforge-data` is a real server's data directory, printing what their comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serverproc import REPO, ServerProcess

pytest_plugins = ["pytester"]


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


def shell_lines(title: str) -> list[str]:
    """The commands of the sh blocks of the README section headed ``title``, comments cut."""
    readme = (REPO / "README.md").read_text()
    section = readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]


def test_the_from_crd_lines_make_an_installable_package(tmp_path: Path) -> None:
    generate, install = shell_lines("Typed clients")
    assert generate.startswith("apiforge client --from-crd") and install.startswith("pip install")
    (tmp_path / "tests").symlink_to(REPO / "tests")
    apiforge = Path(sys.executable).with_name("apiforge")
    subprocess.run([str(apiforge), *generate.split()[1:]], cwd=tmp_path, check=True, timeout=300)
    site = tmp_path / "site"
    package = install.split()[-1]
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip, "--target", str(site), package],
        cwd=tmp_path,
        check=True,
        timeout=300,
    )
    check = "from certmanager.cert_manager_io.v1.client import issuers; print(issuers.__name__)"
    result = subprocess.run(
        [sys.executable, "-c", check],
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == "issuers", result.stderr


def test_the_testing_block_passes_as_a_projects_test(pytester: pytest.Pytester) -> None:
    (block,) = python_blocks("Testing against the API")
    pytester.makeini(f"[pytest]\napiforge_project = {REPO}\n")
    pytester.makepyfile(test_crontabs=block)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "ignore")
    result.assert_outcomes(passed=1)
