"""`python -m bench testing`: what apiforge.testing's fixtures cost a test, as a suite pays it: the session's
server in a new process (importing apiforge.testing, then its first start, which imports the project's
generated package: `python -m bench` has imported everything already, so this is measured in child
processes, the median of three), and in this process a server of a test's own (``apiforge_fresh_server``:
forked from the session server's storage) and a namespace of a test's own (``apiforge_namespace``: created,
then deleted). Target: a test's own server, and the session's server in a new process once
apiforge.testing is imported, start in under 0.3 s."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO, Row, median, print_rows

ROUNDS = 10
COLD_ROUNDS = 3
TARGET_SECONDS = 0.3
COLD_START = """
import json, sys, tempfile, time
from pathlib import Path
started = time.perf_counter()
from apiforge.testing import Settings, TestServer
imported = time.perf_counter()
with tempfile.TemporaryDirectory() as scratch:
    with TestServer(Settings(project=Path(sys.argv[1])), Path(scratch)):
        print(json.dumps([imported - started, time.perf_counter() - imported]))
"""


def cold_start() -> tuple[float, float]:
    """In a new process: seconds to import apiforge.testing, then to start the session's server."""
    argv = [sys.executable, "-c", COLD_START, str(REPO)]
    output = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout
    imported, first = json.loads(output.splitlines()[-1])
    return imported, first


def cold_starts() -> tuple[float, float]:
    """The medians of COLD_ROUNDS new processes' ``cold_start`` (one process is at the mercy of a load
    spike on a shared machine)."""
    rounds = [cold_start() for _ in range(COLD_ROUNDS)]
    return median([imported for imported, _ in rounds]), median([first for _, first in rounds])


def run() -> list[Row]:
    from apiforge.testing import Settings, TestServer

    imported, first = cold_starts()
    with tempfile.TemporaryDirectory() as scratch:
        server = TestServer(Settings(project=REPO), Path(scratch) / "session")
        server.start()
        try:
            forks = []
            for number in range(ROUNDS):
                started = time.perf_counter()
                fork = server.fork(Path(scratch) / f"fork-{number}")
                fork.start()
                forks.append(time.perf_counter() - started)
                fork.stop()
            namespaces = []
            with server.http() as client:
                for number in range(ROUNDS):
                    started = time.perf_counter()
                    path = "/api/v1/namespaces"
                    client.post(path, json={"metadata": {"name": f"n{number}"}}).raise_for_status()
                    client.delete(f"{path}/n{number}").raise_for_status()
                    namespaces.append(time.perf_counter() - started)
        finally:
            server.stop()
    fork_seconds = median(forks)
    result = [
        Row(
            "testing", "a new process imports apiforge.testing, median of 3 (s)", f"{imported:.2f}"
        ),
        Row(
            "testing",
            "then the session server's first start (generated package imported), median (s)",
            f"{first:.2f}",
            f"< {TARGET_SECONDS} s",
            first < TARGET_SECONDS,
        ),
        Row(
            "testing",
            "a test's own server (fork of the session's), median (s)",
            f"{fork_seconds:.3f}",
            f"< {TARGET_SECONDS} s",
            fork_seconds < TARGET_SECONDS,
        ),
        Row(
            "testing",
            "a test's own namespace, created and deleted (ms)",
            f"{median(namespaces) * 1000:.1f}",
        ),
    ]
    print_rows(result)
    return result


if __name__ == "__main__":
    run()
