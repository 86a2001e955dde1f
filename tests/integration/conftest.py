"""Fixtures of the integration tests that run servers on etcd."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.etcdproc import EtcdProcess, running_etcd


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    """A real etcd for the module's servers (one per module: a module may kill and restart it)."""
    yield from running_etcd(tmp_path_factory.mktemp("etcd"))
