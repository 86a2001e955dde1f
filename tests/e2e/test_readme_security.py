"""The README's Security section runs as written: its shell blocks, in order, against a real server with RBAC
auditing with docs/audit-policy.yaml, from a directory where `.apiforge-data` is the server's data directory
and `audit.log` its audit log, with `KUBECONFIG` its admin.kubeconfig and `kubectl` 1.33 on the PATH (the only
change: the server's port for 6443). A block that
starts a server of its own (`apiforge serve`) is left out. A command commented `# yes` or `# no` must say
so; any other must succeed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kubectl import kubectl_binary
from tests.serverproc import REPO, ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)
SETTLE = 10.0
"""Seconds a new binding may take to reach the authorizer (it follows watches)."""


def security_commands() -> list[str]:
    """The commands of the Security section's shell blocks (continuation lines joined), in order."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Security\n", 1)[1].split("\n## ", 1)[0]
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL):
        if "apiforge serve" in block:
            continue
        commands += [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    return commands


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("readme")
    audit = ("--audit-policy-file", str(REPO / "docs" / "audit-policy.yaml"))
    process = ServerProcess(
        work / "data",
        free_port(),
        storage="memory",
        extra_args=(
            "--authorization-mode=RBAC",
            *audit,
            "--audit-log-path",
            str(work / "audit.log"),
        ),
    )
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


def test_the_security_sections_commands_run_as_written(
    server: ServerProcess, tmp_path: Path
) -> None:
    commands = security_commands()
    assert any("create rolebinding" in command for command in commands)
    (tmp_path / ".apiforge-data").symlink_to(server.data_dir)
    (tmp_path / "audit.log").symlink_to(server.data_dir.parent / "audit.log")
    shutil.copy(server.kubeconfig, tmp_path / "kubeconfig")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").symlink_to(kubectl_binary(33))
    environment = {
        **os.environ,
        "HOME": str(tmp_path),
        "KUBECONFIG": str(tmp_path / "kubeconfig"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    for command in commands:
        line = command.replace("6443", str(server.port))
        expected = re.search(r"#\s*(yes|no)\s*$", line)
        deadline = time.monotonic() + SETTLE
        while True:
            result = subprocess.run(
                ["bash", "-o", "pipefail", "-c", line],
                cwd=tmp_path,
                env=environment,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if expected:
                done = result.stdout.strip() == expected.group(1)
            else:
                done = result.returncode == 0
            if done or time.monotonic() > deadline:  # bindings reach the authorizer by watch
                break
            time.sleep(0.2)
        assert done, f"{command}\n{result.stdout}\n{result.stderr}"
