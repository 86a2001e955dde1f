"""The README's first sections run as written, from a directory laid out as the repository's root:
"With the server running" (its one shell block, as one bash script, against a real server whose data directory
is `.apiforge-data`, with kubectl 1.33 on the PATH), and "Adding a kind" in a copy of the project, where
`make run` alone (no `make generate`) must serve the new kind: `make run` regenerates what changed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kubectl import kubectl_binary
from tests.serverproc import READY_TIMEOUT, REPO, ServerProcess, free_port, kubeconfig_tls
from tests.shipped import copy_shipped_definitions

pytestmark = pytest.mark.timeout(180)


def section_blocks(title: str) -> list[str]:
    """The shell blocks of the README section headed ``title`` (up to the next heading of any level)."""
    readme = (REPO / "README.md").read_text()
    section = re.split(r"\n#+ ", readme.split(f"\n## {title}\n", 1)[1], maxsplit=1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.DOTALL)


def kubectl_path(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").symlink_to(kubectl_binary(33))
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "data", free_port(), storage="memory")
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


def test_the_first_steps_run_as_written(server: ServerProcess, tmp_path: Path) -> None:
    first_steps = section_blocks("The two commands")[1]
    assert first_steps.startswith("export KUBECONFIG=.apiforge-data/admin.kubeconfig")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".apiforge-data").symlink_to(server.data_dir)
    (work / "docs").symlink_to(REPO / "docs")
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", first_steps],
        cwd=work,
        env=kubectl_path(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "crontabs" in result.stdout and "ct " in result.stdout  # api-resources
    assert "crontab.stable.example.com/my-new-cron-object created" in result.stdout
    assert "crontab.stable.example.com/weekly-report serverside-applied" in result.stdout
    assert (
        "manager: kubectl\n    operation: Apply" in result.stdout
    )  # the applied object's managedFields


def test_a_new_kind_is_served_by_make_run_alone(tmp_path: Path) -> None:
    """The README's "Adding a kind" without its `make generate`: `make run` must see the new definition."""
    block = section_blocks("Adding a kind")[0]
    new_kind = block.splitlines()[0].split("#")[0].strip()
    assert new_kind.startswith(".venv/bin/apiforge new --group tools.example.com --kind Gadget")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, project / name)
    copy_shipped_definitions(project / "definitions")
    shutil.copytree(
        REPO / "generated", project / "generated", ignore=shutil.ignore_patterns(".manifest.json")
    )
    (project / ".venv").symlink_to(Path(sys.prefix))  # this interpreter's environment is installed
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than the copied pyproject.toml: make installs nothing
    environment = kubectl_path(tmp_path)
    subprocess.run(["bash", "-c", new_kind], cwd=project, env=environment, check=True, timeout=60)
    port, data_dir = free_port(), tmp_path / "data"
    make = ["make", "run", f"PORT={port}", f"DATA_DIR={data_dir}", f"STAMP={stamp}"]
    with subprocess.Popen(
        make,
        cwd=project,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # make and the server it starts are stopped together
    ) as running:
        try:
            kubeconfig = data_dir / "admin.kubeconfig"
            deadline = time.monotonic() + READY_TIMEOUT + 60  # generating the new group comes first
            while not kubeconfig.exists() and running.poll() is None:
                assert time.monotonic() < deadline, "make run did not serve"
                time.sleep(0.1)
            assert kubeconfig_tls(kubeconfig) is not None
            environment["KUBECONFIG"] = str(kubeconfig)
            listed = subprocess.run(
                ["kubectl", "api-resources", "--api-group", "tools.example.com"],
                env=environment,
                capture_output=True,
                text=True,
                timeout=60,
            )
        finally:
            os.killpg(running.pid, signal.SIGTERM)
            output = running.communicate(timeout=30)[0].decode()
    assert "gadgets" in listed.stdout, output + listed.stderr
    assert (project / "generated" / "tools_example_com" / "rest.py").exists()
