"""Where the differential corpus lives in the repository, and fresh servers to run it on: one per scenario,
so that every scenario starts from a server's first state on both sides."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from oracle.cluster import running_cluster
from oracle.execute import Target
from tests.serverproc import ServerProcess, free_port

DIFFERENTIAL = Path(__file__).resolve().parent.parent / "tests" / "differential"
SCENARIOS = DIFFERENTIAL / "scenarios"
GOLDEN = DIFFERENTIAL / "golden"
DIVERGENCES = DIFFERENTIAL / "divergences.yaml"
APIFORGE_READY_TIMEOUT = 120.0
"""A scenario's server starts while other test modules' do (make test runs two at once)."""


@contextmanager
def fresh_apiforge() -> Iterator[Target]:
    """`apiforge serve` with its defaults (SQLite, TLS, RBAC) on a data directory of its own."""
    with tempfile.TemporaryDirectory(prefix="differential-apiforge-") as directory:
        server = ServerProcess(Path(directory), free_port(), ready_timeout=APIFORGE_READY_TIMEOUT)
        server.start()
        try:
            yield server
        finally:
            server.stop()


@contextmanager
def fresh_oracle() -> Iterator[Target]:
    with running_cluster() as cluster:
        yield cluster
