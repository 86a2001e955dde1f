"""`python -m bench testing`: what apiforge.testing's fixtures cost a test, in this process as a suite pays it:
the session's server (its first start, the generated package imported then), a server of a test's own
(``apiforge_fresh_server``: forked from the session server's storage), and a namespace of a test's own
(``apiforge_namespace``: created, then deleted). Target: a server starts in under 0.3 s."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.common import REPO, Row, median, print_rows

ROUNDS = 10
TARGET_SECONDS = 0.3


def run() -> list[Row]:
    from apiforge.testing import Settings, TestServer

    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        server = TestServer(Settings(project=REPO), Path(scratch) / "session")
        server.start()
        first = time.perf_counter() - started
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
            "testing",
            "session server's first start, the generated package imported (s)",
            f"{first:.2f}",
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
