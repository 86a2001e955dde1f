"""The raw ceilings the server phases are held to: aetcd's compare-and-swap, put and linearizable get on a
loop of their own, and sqlite3's point read of one key's latest row."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import aetcd
import uvloop

from bench.engine.sample import Sample
from bench.engine.settings import CONNECTIONS
from bench.storage_bench import RAW_SCHEMA

T = TypeVar("T")


class RawEtcd:
    """An aetcd client on an event loop in a thread of its own, so that its phases can run between
    the HTTP phases (each of which runs its own loop) without reconnecting.

    ``read_keys`` are the etcd keys GET cycles through: the CronTabs the server's GET phase reads,
    so both read the same values."""

    def __init__(self, endpoint: str, value: bytes, read_keys: list[bytes]) -> None:
        self.endpoint = endpoint
        self.value = value
        self.read_keys = read_keys
        self.loop = uvloop.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="raw-etcd", daemon=True)
        self.client: aetcd.Client | None = None
        self.revisions: dict[int, int] = {}

    def call(self, main: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(main, self.loop).result(timeout)

    def start(self) -> None:
        self.thread.start()
        self.call(self._connect())

    async def _connect(self) -> None:
        host, _, port = self.endpoint.removeprefix("http://").partition(":")
        self.client = aetcd.Client(
            host=host, port=int(port), options={"grpc.max_receive_message_length": 2**31 - 1}
        )
        await self.client.connect()
        for worker in range(CONNECTIONS):
            put = await self.client.put(self._key(worker), self.value)
            self.revisions[worker] = put.header.revision
        if await self.client.get(self.read_keys[0]) is None:
            raise RuntimeError(f"raw GET: {self.read_keys[0]!r} is not in etcd")

    @staticmethod
    def _key(worker: int, kind: str = "cas") -> bytes:
        """Each caller's own key for ``kind`` (CAS and PUT use separate keys: a PUT would move the
        revision a CAS compares against)."""
        return f"/registry/bench-raw/{kind}/{worker}".encode()

    async def cas(self, worker: int, _n: int) -> None:
        """kube's GuaranteedUpdate write: put if the key is still at the revision last seen."""
        assert self.client is not None
        key = self._key(worker)
        tx = self.client.transactions
        succeeded, responses = await self.client.transaction(
            compare=[tx.mod(key) == self.revisions[worker]],
            success=[tx.put(key, self.value)],
            failure=[tx.get(key)],
        )
        if not succeeded:
            raise RuntimeError("a raw CAS lost a race it cannot have")
        self.revisions[worker] = responses[0].response_put.header.revision

    async def put(self, worker: int, _n: int) -> None:
        """An unconditional put over the caller's own key: the write alone, without the compare."""
        assert self.client is not None
        await self.client.put(self._key(worker, "put"), self.value)

    async def get(self, worker: int, n: int) -> None:
        """A linearizable read of one key (aetcd's default, as EtcdStorage.get's Range request); the
        callers interleave over ``read_keys`` so that they read different keys."""
        assert self.client is not None
        keys = self.read_keys
        if await self.client.get(keys[(n * CONNECTIONS + worker) % len(keys)]) is None:
            raise RuntimeError("a raw GET found its key missing")

    def stop(self) -> None:
        if self.client is not None:
            self.call(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


# -- raw SQLite point reads ------------------------------------------------------------------------

RAW_GET_SQL = (
    "SELECT id, deleted, create_revision, value FROM log WHERE name = ? ORDER BY id DESC LIMIT 1"
)
"""A key's latest row, as SQLiteStorage.get reads it (kine's log: the key is ``name``, not the
rowid, so a point read is a seek in the (name, id) index and one row fetch)."""


class RawSQLiteReads:
    """A WAL database with storage_bench's raw schema holding one row per key, read back by sqlite3
    in this process: the ceiling of a point read, without SQLiteStorage's reader thread, event loop
    hop and explicit read transaction."""

    def __init__(self, path: Path, keys: list[str], value: bytes) -> None:
        self.path = path
        self.keys = keys
        self.value = value

    def prepare(self) -> None:
        """One row per key, one transaction; WAL and synchronous=FULL like raw_sqlite_rate's (the
        journal mode is what a reader sees: it reads the WAL index on every statement)."""
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
            db.executescript(RAW_SCHEMA)
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO log (name, created, deleted, create_revision, prev_revision, value)"
                " VALUES (?, 1, 0, 0, 0, ?)",
                ((key, self.value) for key in self.keys),
            )
            db.execute("COMMIT")
        finally:
            db.close()

    def measure(self, seconds: float, limit: int) -> Sample:
        """Reads/s of one caller that never waits: each SELECT is its own autocommit read
        transaction, the keys read in turn; CPU per read is this process's (all of the cost)."""
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            keys, count = self.keys, 0
            cpu, started = time.process_time(), time.perf_counter()
            deadline = started + seconds
            while count < limit and time.perf_counter() < deadline:
                if db.execute(RAW_GET_SQL, (keys[count % len(keys)],)).fetchone() is None:
                    raise RuntimeError("a raw SQLite GET found its key missing")
                count += 1
            elapsed, used = time.perf_counter() - started, time.process_time() - cpu
        finally:
            db.close()
        return Sample(count / elapsed, client_us=used / max(count, 1) * 1e6)
