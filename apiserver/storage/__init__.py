"""Storage: a revisioned key-value store modelled on etcd v3, and the backends that implement it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from apiserver.storage.fanout import WatchOverflowError
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    RevisionConflictError,
    Storage,
    StorageError,
    StorageEvent,
    Watch,
)
from apiserver.storage.memory import MemoryStorage
from apiserver.storage.sqlite import DataDirLockedError, SQLiteStorage

if TYPE_CHECKING:
    from apiserver.storage.etcd import EtcdStorage, EtcdUnavailableError

__all__ = [
    "CompactedError",
    "DataDirLockedError",
    "EtcdStorage",
    "EtcdUnavailableError",
    "EventType",
    "FutureRevisionError",
    "KeyExistsError",
    "KeyNotFoundError",
    "KeyValue",
    "ListResult",
    "MemoryStorage",
    "RevisionConflictError",
    "SQLiteStorage",
    "Storage",
    "StorageError",
    "StorageEvent",
    "Watch",
    "WatchOverflowError",
    "open_storage",
]

STATE_FILE = "state.db"

_ETCD_NAMES = frozenset({"EtcdStorage", "EtcdUnavailableError"})


def __getattr__(name: str) -> object:
    """The etcd backend loads on first use: importing gRPC costs ~45 ms of every server start and
    CLI run, which a server on SQLite or memory need not pay."""
    if name in _ETCD_NAMES:
        from apiserver.storage import etcd

        return getattr(etcd, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_storage(
    kind: str,
    data_dir: Path | None,
    *,
    etcd_servers: list[str] | None = None,
    etcd_prefix: str = "/registry",
) -> Storage:
    """The backend named ``kind``, not yet started: "memory", "sqlite" in data_dir/state.db, or
    "etcd" at ``etcd_servers`` (client URLs) with keys under ``etcd_prefix``."""
    if kind == "memory":
        return MemoryStorage()
    if kind == "sqlite":
        if data_dir is None:
            raise ValueError("the sqlite storage backend needs a data directory")
        return SQLiteStorage(data_dir / STATE_FILE)
    if kind == "etcd":
        if not etcd_servers:
            raise ValueError("the etcd storage backend needs --etcd-servers")
        from apiserver.storage.etcd import EtcdStorage

        return EtcdStorage(etcd_servers, etcd_prefix)
    raise ValueError(f"unknown storage backend {kind!r} (expected 'memory', 'sqlite' or 'etcd')")
