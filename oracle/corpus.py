"""Where the differential corpus lives in the repository, and fresh servers to run it on: one per scenario,
so that every scenario starts from a server's first state on both sides."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from generator.pipeline import GenerateConfig, generate
from oracle.cluster import running_cluster
from oracle.execute import Target
from tests.serverproc import REPO, ServerProcess, free_port
from tests.shipped import shipped_definitions

DIFFERENTIAL = Path(__file__).resolve().parent.parent / "tests" / "differential"
SCENARIOS = DIFFERENTIAL / "scenarios"
GOLDEN = DIFFERENTIAL / "golden"
DIVERGENCES = DIFFERENTIAL / "divergences.yaml"
APIFORGE_READY_TIMEOUT = 120.0
"""A scenario's server starts while other test modules' do (make test runs two at once)."""


@functools.cache
def shipped_project() -> Path:
    """A project of the shipped definitions alone, generated once per process: the goldens record what
    the shipped kinds answer, whatever kinds a user added to the repository's definitions/."""
    definitions = shipped_definitions()
    generate(GenerateConfig(definitions, definitions.parent / "generated"))
    return definitions.parent


def _apiforge(data_dir: Path) -> ServerProcess:
    return ServerProcess(
        data_dir, free_port(), ready_timeout=APIFORGE_READY_TIMEOUT, cwd=shipped_project()
    )


def _start(server: ServerProcess) -> None:
    """Started from the shipped project, whose generated package shadows the repository's; the
    repository stays importable for the hooks the definitions name."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    server.start(extra_env={"PYTHONPATH": path})


@contextmanager
def fresh_apiforge() -> Iterator[Target]:
    """`apiforge serve` with its defaults (SQLite, TLS, RBAC) on a data directory of its own."""
    with tempfile.TemporaryDirectory(prefix="differential-apiforge-") as directory:
        server = _apiforge(Path(directory))
        _start(server)
        try:
            yield server
        finally:
            server.stop()


def _started_apiforge() -> ServerProcess:
    server = _apiforge(Path(tempfile.mkdtemp(prefix="differential-apiforge-")))
    _start(server)
    return server


def _discard(server: ServerProcess) -> None:
    server.stop()
    shutil.rmtree(server.data_dir, ignore_errors=True)


class ApiforgeSpares:
    """Fresh apiforges, each started while the previous scenario runs: every scenario still gets a server
    in its first state, but a replay waits for a start-up only once, not once per scenario."""

    def __init__(self) -> None:
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="apiforge-spare")
        self._spare: Future[ServerProcess] | None = None

    @contextmanager
    def fresh(self) -> Iterator[Target]:
        """The spare server (started now if there is none), and the next spare's start begun."""
        spare = self._spare or self._starter.submit(_started_apiforge)
        self._spare = self._starter.submit(_started_apiforge)
        server = spare.result()
        try:
            yield server
        finally:
            _discard(server)

    def close(self) -> None:
        if self._spare is not None:
            _discard(self._spare.result())
            self._spare = None
        self._starter.shutdown()


@contextmanager
def fresh_oracle() -> Iterator[Target]:
    with running_cluster() as cluster:
        yield cluster
