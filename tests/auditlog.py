"""What the audit log tests share: a real server writing its audit log beside its data directory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.serverproc import ServerProcess, free_port


@contextmanager
def audited_server(work: Path, *audit_args: str) -> Iterator[ServerProcess]:
    """A server on the memory store in ``work`` with ``audit_args`` (its --audit-* flags), stopped on
    exit."""
    process = ServerProcess(work / "data", free_port(), storage="memory", extra_args=audit_args)
    process.start()
    try:
        yield process
    finally:
        process.stop()
