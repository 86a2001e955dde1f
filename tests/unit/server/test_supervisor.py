"""The `serve --workers` supervisor over fake workers: a stop that races a restart still stops everything,
and a worker that keeps dying at once is restarted with a growing delay, then given up on."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

from apiserver.server import workers
from tests.serverproc import REPO

DRIVER = Path(__file__).with_name("supervisor_driver.py")


def drive(mode: str, marker: Path, timeout: float) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(DRIVER), mode, str(marker)],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return result.stdout.splitlines()


def test_a_stop_while_a_replacement_is_forked_still_stops_every_worker(tmp_path: Path) -> None:
    # before the fix the replacement never got the SIGTERM and the supervisor waited for it forever
    output = drive("race", tmp_path / "starts", timeout=20)
    assert output[0].startswith("ready ")
    assert output[-1] == "exit 0"


def test_a_worker_that_keeps_dying_is_restarted_later_each_time_then_given_up(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "starts"
    output = drive("crashloop", marker, timeout=60)
    assert output[-1] == "exit 1"
    starts = [float(line) for line in marker.read_text().splitlines()]
    # two first starts, then one replacement per quick exit until more than QUICK_EXITS_TOLERATED in a row
    assert len(starts) == 2 + workers.QUICK_EXITS_TOLERATED
    replacements = sorted(starts)[2:]
    gaps = [later - earlier for earlier, later in itertools.pairwise(replacements)]
    assert all(later > 1.5 * earlier for earlier, later in itertools.pairwise(gaps)), gaps
