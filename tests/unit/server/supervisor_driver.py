"""Runs apiserver.server.workers.Supervisor over fake workers, for test_supervisor.py (a supervisor forks, so
it runs in a process of its own). argv: MODE STARTS_FILE. Prints "ready PORT" and "exit STATUS"; every worker
start appends its time to STARTS_FILE.

Modes: "race" (the first worker dies once; a SIGTERM lands while its replacement is being forked),
"crashloop" (the first worker dies once, every replacement fails at once), "slow" (workers take longer to be
ready than the supervisor waits), "slowstart" (workers take two seconds to be ready, then serve), "alldown"
(both first workers die at once after being ready; their replacements serve)."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from apiserver.server import workers

RESTART_DELAY = 0.05
"""The first restart delay in every mode but "alldown" (1 s there, long enough to look at the port)."""


def record_start(starts_file: Path) -> int:
    """Append this start's time; its number, counted under a lock (workers start at the same moment)."""
    with starts_file.open("a+") as starts:
        fcntl.flock(starts, fcntl.LOCK_EX)
        starts.seek(0)
        number = len(starts.read().splitlines()) + 1
        starts.write(f"{time.monotonic()}\n")
        return number


def main(mode: str, starts_file: Path) -> None:
    workers.FIRST_RESTART_DELAY_SECONDS = 1.0 if mode == "alldown" else RESTART_DELAY
    workers.READY_TIMEOUT_SECONDS = 0.5 if mode == "slow" else 60.0

    def worker(listener: socket.socket, on_ready: Callable[[], None]) -> None:
        start = record_start(starts_file)
        if mode in ("slow", "slowstart"):
            time.sleep(2)
        on_ready()
        if mode == "crashloop" and start > 2:
            raise RuntimeError("cannot start")
        if start == 1 or (mode == "alldown" and start == 2):
            os._exit(3)
        while True:
            time.sleep(1)  # the supervisor's SIGTERM (the default action, in a worker) ends it

    if mode == "race":
        real_fork, forks = os.fork, [0]

        def fork() -> int:
            pid = real_fork()
            if pid:
                forks[0] += 1
                if forks[0] == 3:
                    os.kill(os.getpid(), signal.SIGTERM)
            return pid

        os.fork = fork
    supervisor = workers.Supervisor(
        2,
        workers.claim_port("127.0.0.1", 0),
        worker,
        lambda port: print("ready", port, flush=True),
    )
    print("exit", supervisor.run(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
