"""Storage: a revisioned key-value store modelled on etcd v3, and the backends that implement it."""

from __future__ import annotations

from pathlib import Path

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

__all__ = [
    "CompactedError",
    "DataDirLockedError",
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


def open_storage(kind: str, data_dir: Path | None) -> Storage:
    """The backend named ``kind``, not yet started: "memory", or "sqlite" in data_dir/state.db."""
    if kind == "memory":
        return MemoryStorage()
    if kind == "sqlite":
        if data_dir is None:
            raise ValueError("the sqlite storage backend needs a data directory")
        return SQLiteStorage(data_dir / STATE_FILE)
    raise ValueError(f"unknown storage backend {kind!r} (expected 'memory' or 'sqlite')")
