"""Runs apiserver.server.workers.Supervisor over fake workers, for test_supervisor.py (a supervisor forks, so
it runs in a process of its own). argv: MODE MARKER_FILE. Prints "ready PORT" and "exit STATUS"."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from apiserver.server import workers


def main(mode: str, marker: Path) -> None:
    workers.FIRST_RESTART_DELAY_SECONDS = 0.05

    def worker(listener: socket.socket, on_ready: Callable[[], None]) -> None:
        on_ready()
        with marker.open("a") as log:  # one line per worker start: its time
            log.write(f"{time.monotonic()}\n")
        starts = len(marker.read_text().splitlines())
        if mode == "crashloop" and starts > 2:  # every replacement fails at once
            raise RuntimeError("cannot start")
        if starts == 1:  # the first worker dies once, to be replaced
            os._exit(3)
        while True:
            time.sleep(1)  # SIGTERM (the default action, in a worker) ends it

    if (
        mode == "race"
    ):  # a SIGTERM lands while the replacement is being forked, before it is registered
        real_fork, forks = os.fork, [0]

        def fork() -> int:
            pid = real_fork()
            if pid:
                forks[0] += 1
                if forks[0] == 3:
                    os.kill(os.getpid(), signal.SIGTERM)
            return pid

        os.fork = fork
    port = workers.claim_port("127.0.0.1", 0)
    supervisor = workers.Supervisor(
        2, "127.0.0.1", port, worker, lambda port: print("ready", port, flush=True)
    )
    print("exit", supervisor.run(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
