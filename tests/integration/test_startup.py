"""`apiforge serve` starting, as a user sees it: a failure to start is one line on stderr (kube-apiserver's
`Error: failed to create listener: failed to listen on ...: bind: address already in use`, exit 1), with the
traceback only under `-v`; a successful start says where it serves and which kubeconfig to export."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serverproc import REPO, ServerProcess, free_port

pytestmark = pytest.mark.timeout(90)


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "apiforge", "serve", "--bind-address", "127.0.0.1", *args]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)


def test_a_taken_port_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--data-dir", str(tmp_path), "--port", str(port))
    assert result.returncode == 1
    assert result.stderr == (
        f"Error: failed to listen on 127.0.0.1:{port}: bind: address already in use\n"
    )
    # refused before anything was written: no kubeconfig says "ready", no database was created
    assert not (tmp_path / "admin.kubeconfig").exists()
    assert not (tmp_path / "state.db").exists()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("running"), free_port(), storage="sqlite")
    process.start()
    yield process
    process.stop()


def test_a_locked_data_directory_is_one_line_and_exit_1(running: ServerProcess) -> None:
    result = serve("--data-dir", str(running.data_dir), "--port", str(free_port()))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert [line for line in lines if line.startswith("Error: ")] == [
        f"Error: {running.data_dir / 'state.db'} is in use by another apiforge process"
        f" (pid {running_pid(running)}); stop it or use another data directory"
    ]
    assert "Traceback" not in result.stderr
    assert running.http("GET", "/readyz").status_code == 200  # the first server is untouched


def test_verbose_adds_the_traceback(running: ServerProcess) -> None:
    result = serve("--data-dir", str(running.data_dir), "--port", str(free_port()), "-v")
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "DataDirLockedError" in result.stderr
    assert result.stderr.rstrip().endswith("stop it or use another data directory")


def running_pid(server: ServerProcess) -> int:
    assert server.process is not None
    return server.process.pid


def test_the_ready_line_names_the_url_and_the_kubeconfig(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "apiforge", "serve", "--data-dir", str(tmp_path)]
    command += ["--bind-address", "127.0.0.1", "--port", str(port), "--storage", "memory"]
    with subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as server:
        assert server.stdout is not None
        lines = []
        for line in server.stdout:  # the ready line comes, or the process ends and the loop with it
            lines.append(line)
            if "apiforge serving on" in line:
                break
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    assert (
        f"apiforge serving on https://127.0.0.1:{port} (storage: memory at {tmp_path});"
        f" ready: export KUBECONFIG={tmp_path / 'admin.kubeconfig'}"
    ) in lines[-1]
    assert (tmp_path / "admin.kubeconfig").exists()
