"""Shared fixtures: the server in process (``inprocess``, ``api``) or as a real process (``server``, ``client``)
per test module; and the order of the modules, the slowest first (tests/schedule.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.inprocess import InProcessServer
from tests.schedule import slowest_modules_first
from tests.serverproc import ServerProcess, free_port


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest modules first, so that xdist's workers end together (tests/schedule.py)."""
    slowest_modules_first(items, config.rootpath)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port())
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client(timeout=10) as http:
        yield http


@pytest.fixture(scope="module")
def inprocess() -> Iterator[InProcessServer]:
    """The server in this process over memory storage, one per test module (tests/inprocess.py)."""
    with InProcessServer() as server:
        yield server


@pytest.fixture(scope="module")
def api(inprocess: InProcessServer) -> Iterator[httpx.Client]:
    """A client of the module's in-process server."""
    with inprocess.client() as http:
        yield http


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"
