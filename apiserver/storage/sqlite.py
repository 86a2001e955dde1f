"""SQLiteStorage: the embedded default backend, a kine-style append-only log in one SQLite file.

Every write appends one row whose ``id`` is the global revision. The current state is the latest row
per name that is not a delete; older rows serve lists at old revisions and watch replay until
compaction drops them.

Concurrency follows the measurements (an fsync'd commit costs ~0.4 ms, and 128 rows per commit give
~5x the row rate of one): a single writer thread owns the only write connection and group-commits.
It commits the writes of one turn of the event loop (and any others queued meanwhile) in one
transaction, checks each write's precondition inside it (each write has its own outcome) and
resolves the callers' futures on the event loop after COMMIT. Reads
run on a small pool of threads with their own connections; WAL lets them read while the writer
commits. Watches are fed in-process by the writer after each commit, so nothing polls. The event
loop never touches SQLite.
"""

from __future__ import annotations

import asyncio
import builtins
import fcntl
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, TypeVar

from apiserver.storage.fanout import DEFAULT_WATCH_CAPACITY, WatchHub, WatchStream
from apiserver.storage.interface import (
    CompactedError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    RevisionConflictError,
    StorageError,
    StorageEvent,
    check_value_size,
)

T = TypeVar("T")

# kine's log table. Its index is kine's (name, id) plus ``deleted``, so that counting the keys
# visible at a revision (a list's ``remaining``) reads the index alone: ~2x faster than with (name,
# id).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS log_name_id_deleted ON log (name, id, deleted);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
"""

_MAX_BATCH = 512
"""Writes per group commit: enough to amortize the fsync, few enough to bound a commit's latency."""

_REPLAY_PAGE = 1_000
"""History rows a watch replays per read: a long replay holds neither one snapshot nor every row."""


class DataDirLockedError(StorageError):
    """Another process (or another open store) already uses this database: two writers would
    break the revision sequence."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(
            f"{path} is in use by another apiforge process ({holder});"
            " stop it or use another data directory"
        )
        self.path = path


def _prefix_end(prefix: str) -> str | None:
    """The least string above all strings starting with ``prefix`` (etcd's range_end), or None."""
    stem = prefix.rstrip(chr(0x10FFFF))
    if not stem:
        return None
    following = ord(stem[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates cannot be encoded; skip to the next scalar value
        following = 0xE000
    return stem[:-1] + chr(following)


_Names = tuple[str, tuple[str, ...]]
"""An SQL condition on names and its parameters."""


def _names(prefix: str, lower: str, above: str = ">=") -> _Names:
    """Names (of rows aliased ``l``) under ``prefix`` that are ``above`` (">=" or ">") ``lower``."""
    end = _prefix_end(prefix)
    if end is None:
        return f"l.name {above} ?", (lower,)
    return f"l.name {above} ? AND l.name < ?", (lower, end)


def _private(path: Path) -> None:
    """Create ``path`` readable by its owner only (0600), whatever the umask, and make an existing one so:
    the database holds every Secret. SQLite creates the WAL and shared-memory files with the database
    file's permissions."""
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    os.chmod(path, 0o600)


def _connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode: transactions are explicit, so a read is one snapshot."""
    _private(path)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA busy_timeout = 5000")
    db.execute("PRAGMA synchronous = FULL")
    return db


def _lock(path: Path) -> IO[str]:
    """Hold an exclusive flock next to the database for as long as the returned file stays open."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    _private(lock_path)
    lock_file = open(lock_path, "a+")  # noqa: SIM115 - stays open (and locked) until close()
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.seek(0)
        holder = lock_file.read().strip() or "unknown pid"
        lock_file.close()
        raise DataDirLockedError(path, holder) from None
    lock_file.truncate(0)
    lock_file.write(f"pid {os.getpid()}\n")
    lock_file.flush()
    return lock_file


# ------------------------------------------------------------------------------------------- reads


def _marks(db: sqlite3.Connection) -> tuple[int, int]:
    """(current revision, compact revision). The current revision is the AUTOINCREMENT sequence, not
    MAX(id), because compaction may delete the last row."""
    current, compacted = db.execute(
        "SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'log'),"
        " (SELECT value FROM meta WHERE name = 'compact_revision')"
    ).fetchone()
    return current or 0, compacted or 0


def _latest(db: sqlite3.Connection, key: str) -> tuple[int, KeyValue | None]:
    """(id of the key's latest row or 0, its live value or None when absent or deleted)."""
    row = db.execute(
        "SELECT id, deleted, create_revision, value FROM log"
        " WHERE name = ? ORDER BY id DESC LIMIT 1",
        (key,),
    ).fetchone()
    if row is None:
        return 0, None
    row_id, deleted, create_revision, value = row
    return row_id, None if deleted else KeyValue(key, value, create_revision, row_id)


def _get(db: sqlite3.Connection, key: str) -> KeyValue | None:
    return _latest(db, key)[1]


def _list(
    db: sqlite3.Connection, prefix: str, limit: int, start_key: str | None, revision: int
) -> ListResult:
    current, compacted = _marks(db)
    if revision > current:
        raise FutureRevisionError(revision, current)
    if 0 < revision < compacted:
        raise CompactedError(revision, compacted)
    at = revision or current
    lower = max(prefix, start_key) if start_key is not None else prefix
    items = _live_rows(db, _names(prefix, lower), at, limit)
    remaining = 0
    if limit > 0 and len(items) == limit:
        remaining = _count_live(db, _names(prefix, items[-1].key, ">"), at)
    return ListResult(items=items, revision=at, remaining=remaining)


# A row is visible at revision ``at`` when it is the latest of its name up to ``at`` and not a
# delete. Walking the (name, id, deleted) index in name order with a correlated MAX(id) per row
# needs no sort and no table lookups for counting, and LIMIT stops the walk early: a 500-key page
# costs ~1 ms however many keys follow, where grouping first (kine's MAX(id) ... GROUP BY name join)
# sorts the whole range for every page.
_VISIBLE_AT = (
    "l.id = (SELECT MAX(n.id) FROM log AS n WHERE n.name = l.name AND n.id <= ?) AND l.deleted = 0"
)


def _live_rows(db: sqlite3.Connection, names: _Names, at: int, limit: int) -> list[KeyValue]:
    condition, params = names
    rows = db.execute(
        "SELECT l.name, l.value, l.create_revision, l.id FROM log AS l"
        f" WHERE {condition} AND {_VISIBLE_AT} ORDER BY l.name LIMIT ?",
        (*params, at, limit if limit > 0 else -1),
    )
    return [KeyValue(*row) for row in rows]


def _count_live(db: sqlite3.Connection, names: _Names, at: int) -> int:
    condition, params = names
    (count,) = db.execute(
        f"SELECT COUNT(*) FROM log AS l WHERE {condition} AND {_VISIBLE_AT}", (*params, at)
    ).fetchone()
    return int(count)


def _history(db: sqlite3.Connection, prefix: str, after: int) -> list[StorageEvent]:
    """The next page of events under ``prefix`` after revision ``after``, each with its ``prev``."""
    _, compacted = _marks(db)
    if after < compacted:
        raise CompactedError(after, compacted)
    condition, params = _names(prefix, prefix)
    rows = db.execute(
        "SELECT l.id, l.name, l.deleted, l.create_revision, l.value, p.id, p.value FROM log AS l"
        " LEFT JOIN log AS p ON p.id = l.prev_revision AND l.created = 0"
        f" WHERE l.id > ? AND {condition} ORDER BY l.id LIMIT ?",
        (after, *params, _REPLAY_PAGE),
    )
    events = []
    for row_id, name, deleted, create_revision, value, prev_id, prev_value in rows:
        prev = KeyValue(name, prev_value, create_revision, prev_id) if prev_id is not None else None
        kv = KeyValue(name, value, create_revision, row_id)
        events.append(StorageEvent(EventType.DELETE if deleted else EventType.PUT, kv, prev))
    return events


class _Readers:
    """A fixed pool of reader threads with one connection each; a call is one read transaction."""

    def __init__(self, path: Path, size: int) -> None:
        self._executor = ThreadPoolExecutor(size, thread_name_prefix="sqlite-reader")
        self._connections = [_connect(path) for _ in range(size)]
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        for db in self._connections:
            db.execute("PRAGMA query_only = ON")
            self._idle.put(db)

    async def run(self, read: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._call, read)

    def _call(self, read: Callable[[sqlite3.Connection], T]) -> T:
        db = self._idle.get()  # never waits: there are as many connections as threads
        try:
            db.execute("BEGIN")
            try:
                return read(db)
            finally:
                db.execute("COMMIT")
        finally:
            self._idle.put(db)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        for db in self._connections:
            db.close()


# ------------------------------------------------------------------------------------------ writes


@dataclass(frozen=True, slots=True)
class _Create:
    key: str
    value: bytes


@dataclass(frozen=True, slots=True)
class _Update:
    key: str
    value: bytes
    expected_revision: int


@dataclass(frozen=True, slots=True)
class _Delete:
    key: str
    expected_revision: int | None


_KeyWrite = _Create | _Update | _Delete


def _loop_future() -> asyncio.Future[T]:
    return asyncio.get_running_loop().create_future()


@dataclass(slots=True)
class _WriteRequest:
    write: _KeyWrite
    future: asyncio.Future[StorageEvent] = field(default_factory=_loop_future)

    def settle(self, outcome: StorageEvent | BaseException) -> None:
        # a cancelled caller is not told; its write still happened (or failed) as it would have
        if self.future.done():
            return
        if isinstance(outcome, BaseException):
            self.future.set_exception(outcome)
        else:
            self.future.set_result(outcome)


@dataclass(slots=True)
class _CompactRequest:
    revision: int
    future: asyncio.Future[None] = field(default_factory=_loop_future)

    def settle(self, outcome: BaseException | None) -> None:
        if self.future.done():
            return
        if outcome is None:
            self.future.set_result(None)
        else:
            self.future.set_exception(outcome)


_Request = _WriteRequest | _CompactRequest
_Delivery = Callable[[list[StorageEvent], list[Callable[[], None]]], None]
"""Runs on the event loop after a commit: publish the batch's events, then settle its requests."""


class _Writer:
    """The one thread that writes: takes the requests the event loop hands over, commits them in one transaction
    per batch, then reports.

    The requests submitted during one turn of the loop are handed over together, at the start of its next turn.
    Handed over one by one, each write woke the writer at once, and under load (when the loop works on the next
    request while the writer commits) commits held one write each: per write a commit, a wake-up of each thread
    and GIL hand-offs, ~100 µs of CPU besides the request's own. A turn's writes make one batch at about the
    cost of one write; a write waits for no more than the rest of its turn, which its answer waits for anyway
    (the loop runs the delivery after the turn).
    """

    def __init__(self, path: Path, loop: asyncio.AbstractEventLoop, deliver: _Delivery) -> None:
        self._path = path
        self._loop = loop
        self._deliver = deliver
        self._turn: list[_Request] = []
        """Submitted during this turn of the loop: handed over at the next (loop thread only)."""
        self._queue: queue.SimpleQueue[list[_Request] | None] = queue.SimpleQueue()
        self._carry: list[_Request] = []
        """Handed over beyond the last batch's bound (writer thread only)."""
        self._stopped = False
        self._ready: Future[int] = Future()
        self._thread = threading.Thread(target=self._run, name="sqlite-writer", daemon=True)
        self._revision = 0
        self._compacted = 0

    async def start(self) -> int:
        """Open the database and create the schema on the writer thread; returns the revision."""
        self._thread.start()
        return await asyncio.wrap_future(self._ready)

    def submit(self, request: _Request) -> None:
        """Queue ``request`` (on the event loop); it reaches the writer at the loop's next turn."""
        if not self._turn:
            self._loop.call_soon(self._hand_over)
        self._turn.append(request)

    def _hand_over(self) -> None:
        turn, self._turn = self._turn, []
        if turn:  # empty when stop() handed it over first
            self._queue.put(turn)

    async def stop(self) -> None:
        """Finish every write submitted so far, then close the connection."""
        self._hand_over()
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    def _run(self) -> None:
        try:
            db = _connect(self._path)
        except BaseException as err:
            self._ready.set_exception(err)
            return
        with closing(db):
            try:
                db.execute("PRAGMA journal_mode = WAL")
                db.executescript(_SCHEMA)
                self._revision, self._compacted = _marks(db)
            except BaseException as err:
                self._ready.set_exception(err)
                return
            self._ready.set_result(self._revision)
            while (batch := self._next_batch()) is not None:
                self._commit(db, batch)

    def _next_batch(self) -> list[_Request] | None:
        """Up to ``_MAX_BATCH`` requests: those carried over, else the next turn's (waiting for it), then every
        turn handed over since. None once asked to stop and nothing is left."""
        batch, self._carry = self._carry, []
        while not self._stopped and len(batch) < _MAX_BATCH:
            try:
                turn = self._queue.get(block=not batch)
            except queue.Empty:
                break
            if turn is None:
                self._stopped = True
            else:
                batch += turn
        self._carry = batch[_MAX_BATCH:]
        return batch[:_MAX_BATCH] or None

    def _commit(self, db: sqlite3.Connection, batch: list[_Request]) -> None:
        events: list[StorageEvent] = []
        settles: list[Callable[[], None]] = []
        revision, compacted = self._revision, self._compacted
        try:
            db.execute("BEGIN IMMEDIATE")
            writes: list[_WriteRequest] = []
            for request in batch:
                if isinstance(request, _WriteRequest):
                    writes.append(request)
                    continue
                revision = _apply(db, writes, revision, events, settles)
                writes = []
                outcome: BaseException | None = None
                try:
                    compacted = _compact(db, request.revision, revision, compacted)
                except StorageError as err:
                    outcome = err
                settles.append(partial(request.settle, outcome))
            revision = _apply(db, writes, revision, events, settles)
            db.execute("COMMIT")
        except Exception as err:  # a failed statement or COMMIT: nothing in the batch happened
            if db.in_transaction:
                db.execute("ROLLBACK")
            failure = StorageError(f"sqlite write failed: {err}")
            failure.__cause__ = err
            events, settles = [], [partial(request.settle, failure) for request in batch]
        else:
            self._revision, self._compacted = revision, compacted
        self._loop.call_soon_threadsafe(self._deliver, events, settles)


# A batch's statements are few and whatever its size: each statement gives up the GIL while SQLite runs it
# and must win it back from the event loop's thread, which under load holds it for up to the interpreter's
# switch interval (5 ms). One statement per write made a busy server's writer wait on the GIL more than on
# the disk, and its batches small.
_KEYS_PER_READ = 500
"""Names per read of the latest rows (SQLite allows 32,766 parameters per statement)."""
_ROWS_PER_INSERT = 64
"""Rows per INSERT statement (7 parameters each)."""
_ROW = "(?, ?, ?, ?, ?, ?, ?)"


def _latest_rows(db: sqlite3.Connection, keys: list[str]) -> dict[str, tuple[int, KeyValue | None]]:
    """Per key that has rows: the id of its latest row and its live value (None when a delete)."""
    latest: dict[str, tuple[int, KeyValue | None]] = {}
    for start in range(0, len(keys), _KEYS_PER_READ):
        chunk = keys[start : start + _KEYS_PER_READ]
        rows = db.execute(
            "SELECT name, id, deleted, create_revision, value FROM log WHERE id IN"
            f" (SELECT MAX(id) FROM log WHERE name IN ({', '.join('?' * len(chunk))}) GROUP BY name)",
            chunk,
        )
        for name, row_id, deleted, create_revision, value in rows:
            latest[name] = (
                row_id,
                None if deleted else KeyValue(name, value, create_revision, row_id),
            )
    return latest


def _apply(
    db: sqlite3.Connection,
    requests: list[_WriteRequest],
    revision: int,
    events: list[StorageEvent],
    settles: list[Callable[[], None]],
) -> int:
    """Check each write's precondition against its key's latest row (as the writes before it in the batch
    left it) and append the rows of those that pass from ``revision + 1`` on, in a few statements; returns
    the last revision written."""
    if not requests:
        return revision
    latest = _latest_rows(db, list({request.write.key: None for request in requests}))
    rows: list[object] = []
    for request in requests:
        write = request.write
        latest_id, current = latest.get(write.key, (0, None))
        try:
            event = _event(write, current, revision + 1)
        except StorageError as err:
            settles.append(partial(request.settle, err))
            continue
        revision = event.revision
        deleted = event.type is EventType.DELETE
        rows += (revision, write.key, event.prev is None, deleted)
        rows += (event.kv.create_revision, latest_id, event.kv.value)
        latest[write.key] = (revision, None if deleted else event.kv)
        events.append(event)
        settles.append(partial(request.settle, event))
    width = 7 * _ROWS_PER_INSERT
    for start in range(0, len(rows), width):
        chunk = rows[start : start + width]
        db.execute(
            "INSERT INTO log (id, name, created, deleted, create_revision, prev_revision, value)"
            f" VALUES {', '.join([_ROW] * (len(chunk) // 7))}",
            chunk,
        )
    return revision


def _event(write: _KeyWrite, current: KeyValue | None, revision: int) -> StorageEvent:
    """The event of ``write`` at ``revision`` over the key's ``current`` value, if its precondition holds."""
    match write:
        case _Create(key, value):
            if current is not None:
                raise KeyExistsError(key)
            return StorageEvent(EventType.PUT, KeyValue(key, value, revision, revision), None)
        case _Update(key, value, expected):
            current = _checked(key, current, expected)
            return StorageEvent(
                EventType.PUT, KeyValue(key, value, current.create_revision, revision), current
            )
        case _Delete(key, expected):
            current = _checked(key, current, expected)
            kv = KeyValue(key, current.value, current.create_revision, revision)
            return StorageEvent(EventType.DELETE, kv, current)


def _checked(key: str, current: KeyValue | None, expected_revision: int | None) -> KeyValue:
    if current is None:
        raise KeyNotFoundError(key)
    if expected_revision is not None and current.mod_revision != expected_revision:
        raise RevisionConflictError(key, expected_revision, current)
    return current


def _compact(db: sqlite3.Connection, revision: int, current: int, compacted: int) -> int:
    """Delete the rows no read at ``revision`` or later can see; returns the new compact revision.

    A row is kept while it is the latest of its name at ``revision`` (unless a delete) or newer.
    Freed pages are reused by later inserts; the file itself does not shrink.
    """
    if revision > current:
        raise FutureRevisionError(revision, current)
    if revision <= compacted:
        return compacted
    db.execute(
        "DELETE FROM log WHERE id < :rev"
        " AND id NOT IN (SELECT MAX(id) FROM log WHERE id <= :rev GROUP BY name)",
        {"rev": revision},
    )
    db.execute("DELETE FROM log WHERE deleted = 1 AND id <= ?", (revision,))
    db.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('compact_revision', ?)", (revision,)
    )
    return revision


# ------------------------------------------------------------------------------------------- store


class SQLiteStorage:
    """The storage contract over one SQLite file. WAL with synchronous=FULL: a write is on disk
    before it is acknowledged, so it survives ``kill -9`` and power loss."""

    def __init__(
        self, path: Path, *, readers: int = 2, watch_capacity: int = DEFAULT_WATCH_CAPACITY
    ) -> None:
        self._path = path
        self._reader_count = readers
        self._hub = WatchHub(watch_capacity)
        self._revision = 0
        self._lock_file: IO[str] | None = None
        self._writer: _Writer | None = None
        self._readers: _Readers | None = None

    async def start(self) -> None:
        self._lock_file = await asyncio.to_thread(_lock, self._path)
        try:
            writer = _Writer(self._path, asyncio.get_running_loop(), self._deliver)
            self._revision = await writer.start()
            self._writer = writer
            self._readers = await asyncio.to_thread(_Readers, self._path, self._reader_count)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        self._hub.end_all()
        writer, readers, lock_file = self._writer, self._readers, self._lock_file
        self._writer = self._readers = self._lock_file = None
        if writer is not None:
            await writer.stop()
        if readers is not None:
            await asyncio.to_thread(readers.close)
        if lock_file is not None:
            lock_file.close()

    async def current_revision(self) -> int:
        return self._revision

    async def get(self, key: str) -> KeyValue | None:
        return await self._read(partial(_get, key=key))

    async def list(
        self, prefix: str, *, limit: int = 0, start_key: str | None = None, revision: int = 0
    ) -> ListResult:
        return await self._read(
            partial(_list, prefix=prefix, limit=limit, start_key=start_key, revision=revision)
        )

    async def create(self, key: str, value: bytes) -> KeyValue:
        check_value_size(key, value)
        return (await self._write(_Create(key, value))).kv

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, create_revision: int = 0
    ) -> KeyValue:
        del create_revision  # the write's own transaction reads the row anyway
        check_value_size(key, value)
        return (await self._write(_Update(key, value, expected_revision))).kv

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        return (await self._write(_Delete(key, expected_revision))).kv

    def watch(self, prefix: str, after_revision: int, *, with_prev: bool = True) -> WatchStream:
        del with_prev  # the replay reads previous values with the rows: always included
        return self._hub.subscribe(prefix, after_revision, partial(self._replay, prefix))

    async def compact(self, revision: int) -> None:
        request = _CompactRequest(revision)
        self._open_writer().submit(request)
        await request.future

    async def _replay(self, prefix: str, after_revision: int) -> builtins.list[StorageEvent]:
        return await self._read(partial(_history, prefix=prefix, after=after_revision))

    async def _write(self, write: _KeyWrite) -> StorageEvent:
        request = _WriteRequest(write)
        self._open_writer().submit(request)
        return await request.future

    async def _read(self, read: Callable[[sqlite3.Connection], T]) -> T:
        if self._readers is None:
            raise StorageError("storage is not open")
        return await self._readers.run(read)

    def _open_writer(self) -> _Writer:
        if self._writer is None:
            raise StorageError("storage is not open")
        return self._writer

    def _deliver(
        self, events: builtins.list[StorageEvent], settles: builtins.list[Callable[[], None]]
    ) -> None:
        if events:
            self._revision = events[-1].revision
            self._hub.publish(events)
        for settle in settles:
            settle()
