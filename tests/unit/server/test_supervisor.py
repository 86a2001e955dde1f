"""The `serve --workers` supervisor over fake workers (tests/unit/server/supervisor_driver.py): stops that race
a restart or come from a terminal, start-ups that fail, back-off, and the port held while no worker is up."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from apiserver.server import workers
from tests.serverproc import REPO
from tests.unit.server.supervisor_driver import RESTART_DELAY

DRIVER = Path(__file__).with_name("supervisor_driver.py")


def start(mode: str, starts: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), mode, str(starts)],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a server started from a terminal
    )


def finish(driver: subprocess.Popen[str], timeout: float = 30) -> tuple[list[str], str]:
    try:
        stdout, stderr = driver.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.communicate()
        pytest.fail("the supervisor did not exit")
    return stdout.splitlines(), stderr


def start_times(starts: Path) -> list[float]:
    """When each worker started, in order (none yet: no file)."""
    if not starts.exists():
        return []
    return sorted(float(line) for line in starts.read_text().splitlines())


def test_a_stop_while_a_replacement_is_forked_still_stops_every_worker(tmp_path: Path) -> None:
    # before the fix the replacement never got the SIGTERM and the supervisor waited for it forever
    output, _ = finish(start("race", tmp_path / "starts"), timeout=20)
    assert output[0].startswith("ready ")
    assert output[-1] == "exit 0"


def test_a_worker_that_keeps_dying_is_restarted_later_each_time_then_given_up(
    tmp_path: Path,
) -> None:
    output, _ = finish(start("crashloop", tmp_path / "starts"), timeout=60)
    assert output[-1] == "exit 1"
    starts = start_times(tmp_path / "starts")
    # two first starts, then one replacement per quick exit until more than QUICK_EXITS_TOLERATED in a row
    assert len(starts) == 2 + workers.QUICK_EXITS_TOLERATED
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts[2:])]
    # the n-th quick exit in a row waits RESTART_DELAY * 2**n (plus up to two polls and the exit itself)
    waits = [RESTART_DELAY * 2**quick for quick in range(2, 2 + len(gaps))]
    assert all(wait <= gap < wait + 0.5 for gap, wait in zip(gaps, waits, strict=True)), (
        gaps,
        waits,
    )


def test_workers_not_ready_in_time_fail_the_start(tmp_path: Path) -> None:
    output, stderr = finish(start("slow", tmp_path / "starts"))
    assert output == ["exit 1"]  # never "ready"
    assert "not ready within" in stderr


def test_ctrl_c_while_workers_start_stops_cleanly(tmp_path: Path) -> None:
    """A terminal's SIGINT reaches the supervisor and every worker at once."""
    driver = start("slowstart", tmp_path / "starts")
    deadline = time.monotonic() + 10
    while len(start_times(tmp_path / "starts")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(driver.pid, signal.SIGINT)
    output, stderr = finish(driver)
    assert output == ["exit 0"]
    assert "exited before it was ready" not in stderr


def test_the_port_stays_held_while_every_worker_is_down_and_they_restart_independently(
    tmp_path: Path,
) -> None:
    driver = start("alldown", tmp_path / "starts")
    assert driver.stdout is not None
    port = int(driver.stdout.readline().split()[1])
    time.sleep(0.5)  # both first workers have died; their replacements are 2 s away
    assert len(start_times(tmp_path / "starts")) == 2
    with pytest.raises(OSError):
        workers.claim_port("127.0.0.1", port).close()
    with socket.socket() as other, pytest.raises(OSError):  # a plain server, as uvicorn binds
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", port))
        other.listen()
    deadline = time.monotonic() + 10
    while len(start_times(tmp_path / "starts")) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    first, second = start_times(tmp_path / "starts")[2:]
    assert second - first < 0.5  # each on its own back-off, not one after the other's
    driver.send_signal(signal.SIGTERM)
    output, _ = finish(driver)
    assert output[-1] == "exit 0"
