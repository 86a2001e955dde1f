"""The distributed engine on the real server: writes and reads through etcd and SQLite against their
raw client ceilings, LIST from the watch cache against LIST from storage, and watch fan-out to 1,000
watchers.

One run starts a throwaway etcd (tests/etcdproc.py) and two ``apiforge serve`` processes, one on
``--storage etcd`` against that etcd and one on ``--storage sqlite``, then measures, side by side:

1. **Writes and point reads.** With 32 in flight: the raw aetcd compare-and-swap (txn: compare the
   key's mod_revision, put; 32 keys, one per caller), PUT (a plain put over one key per caller) and
   GET (a linearizable range read of one key, as EtcdStorage.get sends it, cycling through the
   10,000 CronTabs of phase 2) against the server's CREATE (POST of new CronTabs), UPDATE (PUT of a
   CronTab carrying its resourceVersion, one object per connection; each response's resourceVersion
   goes into the connection's next PUT) and GET (of those same 10,000 CronTabs in turn) on etcd; and
   the raw sqlite3 compare-and-insert of storage_bench (sequential, WAL, synchronous=FULL) and a raw
   sqlite3 point read (one caller in this process, one SELECT at a time in autocommit: a key's
   latest row through the (name, id) index, SQLiteStorage.get's query, on a WAL database with
   storage_bench's schema holding 10,000 rows of the same keys and size) against the same three
   requests on SQLite. Values are the stored CronTab's size. CREATE and UPDATE are reported as a
   ratio of the raw CAS (target: server ≥ 0.5x raw), GET as a ratio of the raw GET of its storage
   (reported, no target). The same CREATE and UPDATE also go to bench/etcd_floor_app.py on the same
   etcd, a server doing a write's transport and no Kubernetes work (HTTP, one txn, its watch event):
   its ratio to the raw CAS is the ceiling on this machine, and the server's ratio to it what share
   of that ceiling the server keeps (both reported, no target). A GET on etcd reads etcd (EtcdStorage is not in-process, so the watch
   cache cannot vouch for read-your-writes); on SQLite the watch cache answers it without a storage
   read.
2. **LIST of 10,000 CronTabs** (~1.6 KiB each), written straight into each storage before its
   server starts (Store.create on the storage, so the bytes are what the server stores): the
   ``resourceVersion=0`` list, which the watch cache answers, against the same list with
   ``resourceVersionMatch=Exact&resourceVersion=<current>&limit=10000``, which Store.list sends to
   storage (an exact revision never goes to the cache). One request at a time. Target: the cache
   ≥ 5x faster than storage.
3. **Watch fan-out** on the SQLite server: 1,000 watch connections on one namespace's CronTabs
   (bench/watch_fanout.py: raw asyncio sockets, chunked parsing), one writer creating up to 200
   CronTabs at 50/s, one at a time (an overloaded server slows it down: the rate it reached is
   reported); latency from each create's request being sent to each watcher's line, p50/p99 over
   all deliveries (the server writes to idle watchers before it acknowledges the create, so the
   acknowledgement is no lower bound: this includes the create's own handling and commit). Target: p99 < 50 ms at 50 writes/s. Then the same with one more watcher that
   connects and never reads; the others' latencies side by side, and what the server did with the
   stalled one (closed, or still open with how much queued to it).

Phases rotate between rounds and the medians are reported with same-run ratios (the machines are
noisy: see docs/performance.md). Every phase is bounded by count and by time; everything listens on
127.0.0.1. Run from the repository root: ``.venv/bin/python -m bench.engine_bench`` (or
``python -m bench engine``; about 65 s, of which ``--only writes`` about 35 s).

Diagnostics, not part of ``python -m bench``:

- ``--profile list-cache|list-storage|create|update|fanout [--storage etcd|sqlite] [--py-spy]``:
  the same setup with the server under cProfile (event loop thread; µs per LIST, request or
  delivery) or sampled by py-spy (all threads: gRPC and SQLite threads too);
- ``--only writes,lists,fanout``: just those phases (repeatable or comma-separated), e.g.
  ``--only lists`` to measure LIST alone in about 20 s;
- ``--fan-sweep``: the fan-out alone at 10, 100, 300 and 1,000 watchers;
- ``--write-sweep``: the etcd writes alone (raw CAS, server, transport floor) at 1 to 32 in flight;
- ``--server-gc-threshold N``: servers started with ``gc.set_threshold(N, 20, 100)``, to see what
  the cyclic garbage collector costs a phase.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import aetcd
import orjson
import uvloop

from apiserver.machinery.scheme import ResourceType
from apiserver.registry.store import Store
from apiserver.registry.strategy import strategy_for
from apiserver.storage import EtcdStorage, SQLiteStorage, Storage
from bench.common import (
    REPO,
    ChildServer,
    Row,
    cpu_seconds,
    free_port,
    median,
    print_rows,
    rotated,
    spread,
)
from bench.etcd_bench import Op, measure_phase
from bench.loadgen import STALL_SECONDS, Load, RequestFactory, drive, get_request, post_request
from bench.profile_server import print_cprofile
from bench.server_bench import body_factory, crontab
from bench.storage_bench import RAW_SCHEMA, raw_sqlite_rate
from bench.watch_fanout import FanResult, fan_out, open_fds, rss_bytes
from tests.etcdproc import EtcdProcess

T = TypeVar("T")

ROUNDS = 3
WRITE_SECONDS = 0.8
CONNECTIONS = 32
WRITE_LIMIT = 20_000
READ_LIMIT = 200_000
"""Reads per phase and round: a bound far above what WRITE_SECONDS allows, like WRITE_LIMIT."""
LIST_OBJECTS = 10_000
LIST_REQUESTS = 3
"""LISTs per phase and round (one at a time), also bounded by LIST_SECONDS."""
LIST_SECONDS = 2.0
POPULATE_CONCURRENCY = 64
FAN_WATCHERS = 1000
FAN_WRITES = 200
FAN_RATE = 50.0
FAN_ROUNDS = 2
"""Fan-out runs of each kind (without and with the stalled watcher), alternating."""

WRITE_TARGET = 0.5
LIST_TARGET = 5.0
FAN_P99_TARGET = 0.050
STALL_TOLERANCE = 1.5
"""The others' p99 with a stalled watcher may be this many times the run without one (or 5 ms more)."""

GROUP_PATH = "/apis/stable.example.com/v1"
LIST_NS, CREATE_NS, UPDATE_NS, FAN_NS = "bench-list", "bench-create", "bench-update", "bench-fan"
COUNTER = "bench.apiforge.dev/n"
STORAGES = ("etcd", "sqlite")
WORKERS = 2
ETCD_WORKERS = f"etcd-x{WORKERS}"
"""The etcd server again with ``--workers``, for the write and read phases (not the LISTs or the
fan-out). It keeps its keys under a prefix of its own, so that neither etcd server's watch caches
follow the other's writes: each is measured as if it were alone on the etcd."""
SERVERS = {
    "etcd": ("etcd", 1, "/registry"),
    ETCD_WORKERS: ("etcd", WORKERS, f"/registry-x{WORKERS}"),
    "sqlite": ("sqlite", 1, ""),
}
"""Each server's label → (its storage, its worker processes, its etcd prefix)."""
FLOOR = "etcd-floor"
"""bench/etcd_floor_app.py on the same etcd, for the write phases: HTTP, one txn and its watch event
with no Kubernetes work, the most any server on this stack can reach (reported, no target)."""
FLOOR_PREFIX = "/floor/"
RAW_CAS, RAW_PUT, RAW_GET = "raw CAS", "raw PUT", "raw GET"
CREATE, UPDATE, GET = "server CREATE", "server UPDATE", "server GET"
BASELINE = {CREATE: RAW_CAS, UPDATE: RAW_CAS, GET: RAW_GET}
"""The raw phase of the same storage each server phase is reported as a ratio of."""
CACHE_LIST, STORAGE_LIST = "LIST rv=0 (watch cache)", "LIST Exact rv (storage)"
WRITES, LISTS, FANOUT = "writes", "lists", "fanout"
PHASES = frozenset((WRITES, LISTS, FANOUT))
"""The phase groups ``--only`` can pick."""


def storage_of(label: str) -> str:
    """The storage a server label writes to (the floor writes to etcd)."""
    return "etcd" if label == FLOOR else SERVERS[label][0]


def collection(namespace: str) -> str:
    return f"{GROUP_PATH}/namespaces/{namespace}/crontabs"


def list_item(index: int) -> str:
    """The name of one of the CronTabs populate() writes (which the GET phases read back)."""
    return f"item-{index:05d}"


# -- plain HTTP ------------------------------------------------------------------------------------


def http(port: int, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    """One request over a fresh connection: (status, body)."""
    head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n"
    if body:
        head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        chunks = []
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
    response = b"".join(chunks)
    head_bytes, _, payload = response.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head_bytes.lower():
        raise RuntimeError(f"unexpected chunked answer to {method} {path}")
    return int(head_bytes[9:12]), payload


def ensure_namespace(port: int, name: str) -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    status, answer = http(port, "POST", "/api/v1/namespaces", body)
    if status not in (201, 409):
        raise RuntimeError(f"creating namespace {name}: {status} {answer[:300]!r}")


# -- populating storage directly -------------------------------------------------------------------


def crontab_resource() -> ResourceType:
    from generated.server import build_scheme

    resource = build_scheme().resource("stable.example.com", "crontabs")
    assert resource is not None
    return resource


async def populate(storage: Storage, resource: ResourceType, namespace: str, count: int) -> int:
    """Store ``count`` CronTabs as the server would (Store.create: uid, timestamps, generation, the
    storage version's JSON); the size in bytes of one stored value."""
    store = Store(resource, storage, None, strategy_for(resource.group, resource.kind))
    version = resource.storage_version
    names = iter(range(count))
    size = 0

    async def creator() -> None:
        nonlocal size
        for index in names:
            obj: dict[str, Any] = crontab(list_item(index))
            if version.defaulter is not None:
                version.defaulter(obj)
            await store.create(namespace, version.to_internal(obj))
        kv = await storage.get(resource.key(namespace, list_item(0)))
        size = len(kv.value) if kv is not None else 0

    await storage.start()
    try:
        await asyncio.gather(*(creator() for _ in range(POPULATE_CONCURRENCY)))
    finally:
        await storage.close()
    return size


def run_uvloop(main: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


# -- raw etcd CAS, PUT and GET on a loop of its own ------------------------------------------------


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


# -- updates with resourceVersion over keep-alive connections --------------------------------------


class _UpdateRun:
    def __init__(self, limit: int, deadline: float) -> None:
        self.limit = limit
        self.deadline = deadline
        self.sent = 0
        self.done = 0
        self.failures = 0
        self.first_failure = ""
        self.open = 0
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def close_one(self) -> None:
        self.open -= 1
        if self.open == 0 and not self.finished.done():
            self.finished.set_result(None)


class _Updater(asyncio.Protocol):
    """One keep-alive connection PUTting one object: the body is the last response with a counter
    annotation bumped, so it carries the current resourceVersion (a precondition) and changes."""

    def __init__(self, path: str, obj: dict[str, Any], run: _UpdateRun) -> None:
        self.head = f"PUT {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        self.obj = obj
        self.run = run
        self.buffer = bytearray()
        self.body_end = -1
        self.status = 0
        self.transport: asyncio.Transport | None = None
        self.active = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def start(self, run: _UpdateRun) -> None:
        self.run = run
        run.open += 1
        self.active = True
        self._send_next()

    def _send_next(self) -> None:
        run = self.run
        if run.sent >= run.limit or time.perf_counter() >= run.deadline:
            self.active = False
            run.close_one()
            return
        run.sent += 1
        annotations = self.obj["metadata"].setdefault("annotations", {})
        annotations[COUNTER] = str(int(annotations.get(COUNTER, "0")) + 1)
        payload = orjson.dumps(self.obj)
        assert self.transport is not None
        self.transport.write(
            f"{self.head}content-length: {len(payload)}\r\n\r\n".encode() + payload
        )

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if self.body_end < 0:
            head_end = buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(buffer[:head_end]).lower()
            self.status = int(head[9:12])
            at = head.find(b"\r\ncontent-length:")
            line_end = head.find(b"\r\n", at + 2)
            length = int(head[at + 17 : line_end if line_end >= 0 else None])
            self.body_end = head_end + 4 + length
        if len(buffer) < self.body_end:
            return
        body = bytes(buffer[buffer.find(b"\r\n\r\n") + 4 : self.body_end])
        del buffer[: self.body_end]
        self.body_end = -1
        run = self.run
        if self.status == 200:
            run.done += 1
            self.obj = orjson.loads(body)
        else:
            run.failures += 1
            run.first_failure = run.first_failure or body[:400].decode("latin-1")
            self.active = False
            run.close_one()
            return
        if self.active:
            self._send_next()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.active:
            self.active = False
            self.run.failures += 1
            self.run.first_failure = self.run.first_failure or f"connection lost: {exc}"
            self.run.close_one()


async def _drive_updates(
    port: int, objects: list[tuple[str, dict[str, Any]]], seconds: float, server_pid: int
) -> Load:
    """PUTs over one connection per object for ``seconds``; ``objects`` is updated in place with each
    object's latest state (so the next phase starts at the current resourceVersion)."""
    loop = asyncio.get_running_loop()
    placeholder = _UpdateRun(0, 0.0)
    protocols: list[_Updater] = []
    for path, obj in objects:
        _transport, protocol = await loop.create_connection(
            lambda p=path, o=obj: _Updater(p, o, placeholder),  # type: ignore[misc]
            "127.0.0.1",
            port,
        )
        protocols.append(protocol)
    try:
        run = _UpdateRun(WRITE_LIMIT, time.perf_counter() + seconds)
        server_before, client_before = cpu_seconds(server_pid), time.process_time()
        started = time.perf_counter()
        for protocol in protocols:
            protocol.start(run)
        await asyncio.wait_for(run.finished, seconds + STALL_SECONDS)
        elapsed = time.perf_counter() - started
        return Load(
            run.done,
            run.failures,
            elapsed,
            cpu_seconds(server_pid) - server_before,
            time.process_time() - client_before,
            first_failure=run.first_failure,
        )
    finally:
        for index, protocol in enumerate(protocols):
            objects[index] = (objects[index][0], protocol.obj)
            if protocol.transport is not None:
                protocol.transport.close()


# -- the run -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One phase of one round: ops (or LISTs) per second, and CPU per op where measured."""

    rate: float
    server_us: float = float("nan")
    etcd_us: float = float("nan")
    client_us: float = float("nan")


Phase = tuple[str, str]
"""(storage, phase name)."""


class Engine:
    """The etcd process, the two servers and the data of one run."""

    def __init__(
        self, work: Path, storages: tuple[str, ...] = STORAGES, wrapper: tuple[str, ...] = ()
    ) -> None:
        self.work = work
        self.storages = storages
        self.wrapper = wrapper  # goes before `-m apiforge` (cProfile's options)
        self.etcd = EtcdProcess(work / "etcd-data", work / "etcd.log")
        self.servers: dict[str, ChildServer] = {}
        self.raw_etcd: RawEtcd | None = None
        self.raw_sqlite_reads: RawSQLiteReads | None = None
        self.value = b""
        self.read_keys: list[str] = []
        self.populate_seconds: dict[str, float] = {}
        self.list_revision: dict[str, str] = {}
        self.list_bytes: dict[str, int] = {}
        self.updates: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.runs = 0

    # -- setup -------------------------------------------------------------------------------------

    def setup(self) -> None:
        if "etcd" in self.storages:
            self.etcd.start()
        resource = crontab_resource()
        self.read_keys = [resource.key(LIST_NS, list_item(i)) for i in range(LIST_OBJECTS)]
        for label, (name, _, prefix) in SERVERS.items():
            if name not in self.storages:
                continue
            storage: Storage
            if name == "etcd":
                storage = EtcdStorage([self.etcd.url], prefix)
            else:
                (self.work / "data-sqlite").mkdir()
                storage = SQLiteStorage(self.work / "data-sqlite" / "state.db")
            started = time.perf_counter()
            size = run_uvloop(populate(storage, resource, LIST_NS, LIST_OBJECTS))
            self.populate_seconds[label] = time.perf_counter() - started
            self.value = self.value or b"v" * size
            self.start_server(label)
        for label, server in self.servers.items():
            for namespace in (LIST_NS, CREATE_NS, UPDATE_NS, FAN_NS):
                ensure_namespace(server.port, namespace)
            self.updates[label] = [
                self._create_for_update(server.port, f"{label}-{i}") for i in range(CONNECTIONS)
            ]
            if label in self.storages:
                self._check_lists(label)
        if "etcd" in self.storages:
            self.start_floor()
            read_keys = [key.encode() for key in self.read_keys]  # the server's default etcd prefix
            self.raw_etcd = RawEtcd(self.etcd.url, self.value, read_keys)
            self.raw_etcd.start()

    def start_server(self, label: str) -> None:
        storage, workers, prefix = SERVERS[label]
        port = free_port()
        data_dir = self.work / f"data-{label}"  # SQLite's was populated in setup
        argv = [*self.wrapper, "-m", "apiforge", "serve", "--data-dir", str(data_dir)]
        argv += ["--bind-address", "127.0.0.1", "--port", str(port), "--storage", storage]
        if storage == "etcd":
            argv += ["--etcd-servers", self.etcd.url, "--etcd-prefix", prefix]
            argv += ["--workers", str(workers)]
        server = ChildServer(label, argv, port, self.work / f"apiserver-{label}.log")
        server.start(data_dir / "admin.kubeconfig", timeout=60)
        self.servers[label] = server

    def start_floor(self) -> None:
        port = free_port()
        argv = ["-m", "bench.etcd_floor_app", "--port", str(port)]
        argv += ["--etcd", self.etcd.url, "--prefix", FLOOR_PREFIX]
        floor = ChildServer(FLOOR, argv, port, self.work / f"{FLOOR}.log")
        floor.start(timeout=60)
        self.servers[FLOOR] = floor
        self.updates[FLOOR] = [
            self._create_for_update(port, f"{FLOOR}-{i}") for i in range(CONNECTIONS)
        ]

    @staticmethod
    def _create_for_update(port: int, tag: str) -> tuple[str, dict[str, Any]]:
        """An object for one connection of the UPDATE phase (``tag``: unique over the servers, which
        may share one etcd)."""
        name = f"upd-{tag}"
        status, body = http(port, "POST", collection(UPDATE_NS), orjson.dumps(crontab(name)))
        if status != 201:
            raise RuntimeError(f"creating {name}: {status} {body[:300]!r}")
        return f"{collection(UPDATE_NS)}/{name}", orjson.loads(body)

    def _check_lists(self, name: str) -> None:
        """The current revision for the exact-revision LIST, and both LIST shapes return every item."""
        port = self.servers[name].port
        status, body = http(port, "GET", f"{collection(LIST_NS)}?limit=1")
        self.list_revision[name] = orjson.loads(body)["metadata"]["resourceVersion"]
        for label, path in self.list_paths(name).items():
            status, body = http(port, "GET", path)
            document = orjson.loads(body) if status == 200 else {}
            count = len(document.get("items", []))
            if count != LIST_OBJECTS or document["metadata"].get("continue"):
                raise RuntimeError(f"{name} {label}: {status}, {count} items: {body[:300]!r}")
            self.list_bytes[name] = len(body)

    def list_paths(self, name: str) -> dict[str, str]:
        exact = f"resourceVersionMatch=Exact&resourceVersion={self.list_revision[name]}"
        return {
            CACHE_LIST: f"{collection(LIST_NS)}?resourceVersion=0",
            STORAGE_LIST: f"{collection(LIST_NS)}?limit={LIST_OBJECTS}&{exact}",
        }

    def stop_etcd_side(self) -> None:
        if self.raw_etcd is not None:
            self.raw_etcd.stop()
            self.raw_etcd = None
        for label in ("etcd", ETCD_WORKERS, FLOOR):
            server = self.servers.pop(label, None)
            if server is not None:
                server.stop()
        self.etcd.stop()

    def stop_all(self) -> None:
        self.stop_etcd_side()
        for server in self.servers.values():
            server.stop()

    # -- phases ------------------------------------------------------------------------------------

    def write_phases(self) -> dict[Phase, Callable[[], Sample]]:
        """The writes and point reads of phase 1, grouped by storage, each raw phase before the
        server's (the table's order; interleave() rotates the running order). Writes the raw SQLite
        read database first."""
        assert self.raw_etcd is not None
        self.raw_sqlite_reads = RawSQLiteReads(
            self.work / "raw-reads.db", self.read_keys, self.value
        )
        self.raw_sqlite_reads.prepare()
        raw_etcd = self.raw_etcd
        gets = _cycle(
            [get_request(f"{collection(LIST_NS)}/{list_item(i)}")(0) for i in range(LIST_OBJECTS)]
        )
        phases: dict[Phase, Callable[[], Sample]] = {
            ("etcd", RAW_CAS): lambda: self._raw_etcd(raw_etcd.cas),
            ("etcd", RAW_PUT): lambda: self._raw_etcd(raw_etcd.put),
            ("etcd", RAW_GET): lambda: self._raw_etcd(raw_etcd.get),
        }
        for name in (*STORAGES, ETCD_WORKERS):
            if name == "sqlite":
                phases[name, RAW_CAS] = self._raw_sqlite
                phases[name, RAW_GET] = self._raw_sqlite_get
            phases[name, CREATE] = lambda n=name: self._create(n)  # type: ignore[misc]
            phases[name, UPDATE] = lambda n=name: self._update(n)  # type: ignore[misc]
            phases[name, GET] = lambda n=name: self._get(n, gets)  # type: ignore[misc]
        phases[FLOOR, CREATE] = lambda: self._create(FLOOR)
        phases[FLOOR, UPDATE] = lambda: self._update(FLOOR)
        return phases

    def list_phases(self) -> dict[Phase, Callable[[], Sample]]:
        phases: dict[Phase, Callable[[], Sample]] = {}
        for name in STORAGES:
            for label, path in self.list_paths(name).items():
                phases[name, label] = lambda n=name, p=path: self._list(n, p)  # type: ignore[misc]
        return phases

    def _etcd_cpu(self) -> float:
        return cpu_seconds(self.etcd.process.pid) if self.etcd.process is not None else 0.0

    def _raw_etcd(self, op: Op, in_flight: int = CONNECTIONS) -> Sample:
        """One RawEtcd op with ``in_flight`` callers for WRITE_SECONDS; etcd's CPU per op from /proc,
        this process's (gRPC threads included) from measure_phase."""
        assert self.raw_etcd is not None
        before, started = self._etcd_cpu(), time.perf_counter()
        sample = self.raw_etcd.call(measure_phase(op, in_flight, WRITE_SECONDS))
        ops = sample.rate * (time.perf_counter() - started)
        etcd_us = (self._etcd_cpu() - before) / ops * 1e6
        return Sample(sample.rate, etcd_us=etcd_us, client_us=sample.cpu_us)

    def _raw_sqlite(self) -> Sample:
        self.runs += 1
        data_dir = self.work / f"raw-{self.runs}"
        data_dir.mkdir()
        return Sample(raw_sqlite_rate(data_dir, seconds=WRITE_SECONDS, value=self.value))

    def _raw_sqlite_get(self) -> Sample:
        assert self.raw_sqlite_reads is not None
        return self.raw_sqlite_reads.measure(WRITE_SECONDS, READ_LIMIT)

    def _create(self, name: str, in_flight: int = CONNECTIONS) -> Sample:
        server = self.servers[name]
        self.runs += 1
        before = self._etcd_cpu()
        load = drive(
            server.port,
            post_request(collection(CREATE_NS), body_factory(f"c{self.runs}")),
            expect=201,
            connections=in_flight,
            seconds=WRITE_SECONDS,
            limit=WRITE_LIMIT,
            warmup=0,
            server_pid=server.pid,
        )
        return self._sample(name, load, before)

    def _update(self, name: str, in_flight: int = CONNECTIONS) -> Sample:
        """PUTs over the first ``in_flight`` of the server's update objects (one connection each)."""
        server = self.servers[name]
        before = self._etcd_cpu()
        objects = self.updates[name][:in_flight]
        load = run_uvloop(_drive_updates(server.port, objects, WRITE_SECONDS, server.pid))
        self.updates[name][:in_flight] = objects  # their latest states, for the next PUTs
        return self._sample(name, load, before)

    def _get(self, name: str, gets: RequestFactory) -> Sample:
        """GETs of the LIST phase's CronTabs (``gets``: request i for item i mod their count), so
        the 32 connections read different objects that exist."""
        server = self.servers[name]
        before = self._etcd_cpu()
        load = drive(
            server.port,
            gets,
            connections=CONNECTIONS,
            seconds=WRITE_SECONDS,
            limit=READ_LIMIT,
            warmup=0,
            server_pid=server.pid,
        )
        return self._sample(name, load, before)

    def _list(self, name: str, path: str) -> Sample:
        server = self.servers[name]
        before = self._etcd_cpu()
        load = drive(
            server.port,
            get_request(path),
            connections=1,
            seconds=LIST_SECONDS,
            limit=LIST_REQUESTS,
            warmup=0,
            server_pid=server.pid,
        )
        return self._sample(name, load, before)

    def _sample(self, name: str, load: Load, etcd_before: float) -> Sample:
        if load.failures or not load.requests:
            raise RuntimeError(f"{name}: {load.failures} failed, first: {load.first_failure}")
        etcd_us = float("nan")
        if storage_of(name) == "etcd":
            etcd_us = (self._etcd_cpu() - etcd_before) / load.requests * 1e6
        return Sample(load.rate, load.server_us, etcd_us, load.client_cpu / load.requests * 1e6)

    def fan_out(self, stalled: bool, watchers: int = FAN_WATCHERS) -> FanResult:
        server = self.servers["sqlite"]
        self.runs += 1
        tag = f"fan{self.runs}"
        _status, body = http(server.port, "GET", f"{collection(FAN_NS)}?limit=1")
        revision = orjson.loads(body)["metadata"]["resourceVersion"]
        watch = f"{collection(FAN_NS)}?watch=true&resourceVersion={revision}&timeoutSeconds=600"
        template = orjson.dumps(crontab("NAME-PLACEHOLDER"))
        return fan_out(
            server.port,
            watch,
            collection(FAN_NS),
            tag,
            lambda i: template.replace(b"NAME-PLACEHOLDER", f"{tag}-{i}".encode()),
            watchers=watchers,
            writes=FAN_WRITES,
            rate=FAN_RATE,
            stalled=stalled,
            server_pid=server.pid,
        )


def _cycle(requests: list[bytes]) -> RequestFactory:
    """A load generator factory sending ``requests`` in turn."""
    return lambda i: requests[i % len(requests)]


def interleave(phases: dict[Phase, Callable[[], Sample]], rounds: int) -> dict[Phase, list[Sample]]:
    """Every phase once per round, in an order rotated each round."""
    samples: dict[Phase, list[Sample]] = {phase: [] for phase in phases}
    keys = list(phases)
    for round_number in range(rounds):
        for index in rotated([str(i) for i in range(len(keys))], round_number):
            phase = keys[int(index)]
            samples[phase].append(phases[phase]())
    return samples


@dataclass
class Results:
    writes: dict[Phase, list[Sample]]
    lists: dict[Phase, list[Sample]]
    fans: dict[bool, list[FanResult]]  # stalled watcher present → runs
    populate_seconds: dict[str, float]
    list_bytes: dict[str, int]
    value_size: int
    server_fds: int
    server_rss: int


def gc_wrapper(threshold: int) -> tuple[str, ...]:
    """Arguments that start ``apiforge`` with the cyclic GC's first threshold at ``threshold``
    (a diagnostic: how much of a phase's cost is garbage collection)."""
    if not threshold:
        return ()
    code = (
        f"import gc, runpy, sys; gc.set_threshold({threshold}, 20, 100);"
        " sys.argv = ['apiforge', *sys.argv[3:]]; runpy.run_module('apiforge', run_name='__main__')"
    )
    return ("-c", code)


def run(
    rounds: int = ROUNDS,
    fan_rounds: int = FAN_ROUNDS,
    gc_threshold: int = 0,
    only: frozenset[str] = PHASES,
) -> list[Row]:
    """Every phase in ``only`` (all by default); a fan-out-only run needs no etcd side at all."""
    storages = ("sqlite",) if only == {FANOUT} else STORAGES
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as work_dir:
        engine = Engine(Path(work_dir), storages, wrapper=gc_wrapper(gc_threshold))
        try:
            engine.setup()
            lists = interleave(engine.list_phases(), rounds) if LISTS in only else {}
            writes = interleave(engine.write_phases(), rounds) if WRITES in only else {}
            engine.stop_etcd_side()  # the fan-out runs on SQLite; etcd would only add noise
            fans: dict[bool, list[FanResult]] = {}
            if FANOUT in only:
                fans = _fan_runs(engine, fan_rounds)
            sqlite_pid = engine.servers["sqlite"].pid
            results = Results(
                writes,
                lists,
                fans,
                engine.populate_seconds,
                engine.list_bytes,
                len(engine.value),
                open_fds(sqlite_pid),
                rss_bytes(sqlite_pid),
            )
        finally:
            engine.stop_all()
    return report(results)


def _fan_runs(engine: Engine, fan_rounds: int) -> dict[bool, list[FanResult]]:
    """Fan-out runs without and with the stalled watcher, alternating which goes first."""
    fans: dict[bool, list[FanResult]] = {False: [], True: []}
    for round_number in range(fan_rounds):
        for stalled in (False, True) if round_number % 2 == 0 else (True, False):
            fans[stalled].append(engine.fan_out(stalled))
    return fans


def phase_names(text: str) -> frozenset[str]:
    """One ``--only`` value: phase names, comma-separated."""
    chosen = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = chosen - PHASES
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"expected {', '.join(sorted(PHASES))} (comma-separated), got {text!r}"
        )
    return chosen


# -- report ------------------------------------------------------------------------------------------


def _ratios(samples: dict[Phase, list[Sample]], top: Phase, bottom: Phase) -> list[float]:
    return [a.rate / b.rate for a, b in zip(samples[top], samples[bottom], strict=True)]


def _cpu(values: list[Sample], attribute: str, scale: float = 1.0, fmt: str = ",.0f") -> str:
    numbers = [getattr(s, attribute) * scale for s in values]
    numbers = [n for n in numbers if n == n]  # drop NaN
    return f"{median(numbers):{fmt}}" if numbers else "-"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(results: Results) -> list[Row]:
    """The tables of the phases that ran (a run with ``--only`` lacks the others)."""
    print(
        f"populated {LIST_OBJECTS:,} CronTabs ({results.value_size:,} B stored each) straight into"
        " storage: "
        + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in results.populate_seconds.items())
    )
    rows: list[Row] = []
    if results.writes:
        rows.extend(_report_writes(results))
    if results.lists:
        rows.extend(_report_lists(results))
    if results.fans:
        rows.extend(_report_fans(results))
    return rows


def _report_writes(results: Results) -> list[Row]:
    rows: list[Row] = []
    rounds = len(next(iter(results.writes.values())))
    print(
        f"writes and point reads: {rounds} interleaved rounds x {WRITE_SECONDS:g}s,"
        f" {CONNECTIONS} in flight (raw SQLite: one writer, one row per commit; one reader, one"
        " SELECT at a time); x raw: CREATE and UPDATE over raw CAS, GET over raw GET"
    )
    print(
        f"  {'server':<10} {'phase':<14} {'ops/s median (min-max)':>26} {'server µs/op':>13}"
        f" {'etcd µs/op':>11} {'client µs/op':>13} {'x raw (per round)':>20}"
    )
    for (name, phase), samples in results.writes.items():
        ratio = ""
        if phase in BASELINE:
            baseline = (storage_of(name), BASELINE[phase])
            ratio = spread(_ratios(results.writes, (name, phase), baseline), ".2f")
        print(
            f"  {name:<10} {phase:<14} {spread([s.rate for s in samples]):>26}"
            f" {_cpu(samples, 'server_us'):>13} {_cpu(samples, 'etcd_us'):>11}"
            f" {_cpu(samples, 'client_us'):>13} {ratio:>20}"
        )
    for name in (*STORAGES, ETCD_WORKERS):
        storage, workers, _ = SERVERS[name]
        if workers == 1:
            raw = median([s.rate for s in results.writes[name, RAW_CAS]])
            rows.append(Row("engine", f"raw {name} CAS/s, 32 in flight", f"{raw:,.0f}"))
        for phase in (CREATE, UPDATE):
            factor = median(_ratios(results.writes, (name, phase), (storage, RAW_CAS)))
            rate = median([s.rate for s in results.writes[name, phase]])
            processes = f", {workers} workers" if workers > 1 else ""
            rows.append(
                Row(
                    "engine",
                    f"{phase} on {storage}{processes} / raw CAS",
                    f"{factor:.2f} ({rate:,.0f}/s)",
                    f">= {WRITE_TARGET}",
                    factor >= WRITE_TARGET,
                )
            )
    for phase in (CREATE, UPDATE):
        # Reported only: the floor is the ceiling of the target above on this machine and stack,
        # and the second figure what share of it the server keeps (docs/performance.md, E12).
        floor = median(_ratios(results.writes, (FLOOR, phase), ("etcd", RAW_CAS)))
        share = median(_ratios(results.writes, ("etcd", phase), (FLOOR, phase)))
        verb = phase.removeprefix("server ")
        rows.append(Row("engine", f"transport floor {verb} on etcd / raw CAS", f"{floor:.2f}"))
        rows.append(Row("engine", f"{phase} on etcd / transport floor {verb}", f"{share:.2f}"))
    for name in ("etcd", ETCD_WORKERS, "sqlite"):
        storage, workers, _ = SERVERS[name]
        factor = median(_ratios(results.writes, (name, GET), (storage, RAW_GET)))
        rate = median([s.rate for s in results.writes[name, GET]])
        raw = median([s.rate for s in results.writes[storage, RAW_GET]])
        raw_name = "raw aetcd" if storage == "etcd" else "raw sqlite3"
        processes = f", {workers} workers" if workers > 1 else ""
        # Reported only (no target, so no verdict): the issue asks for the figure, not a bar.
        rows.append(
            Row(
                "engine",
                f"{GET} on {storage}{processes} / {raw_name} GET",
                f"{factor:.2f} ({rate:,.0f}/s vs {raw:,.0f}/s)",
            )
        )
    return rows


def _report_lists(results: Results) -> list[Row]:
    rows: list[Row] = []
    rounds = len(next(iter(results.lists.values())))
    print(
        f"LIST of {LIST_OBJECTS:,}: {rounds} interleaved rounds x up to {LIST_REQUESTS} requests,"
        " one at a time; body "
        + ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in results.list_bytes.items())
    )
    print(
        f"  {'storage':<7} {'shape':<26} {'ms per LIST median (min-max)':>30}"
        f" {'server CPU ms':>14} {'etcd CPU ms':>12}"
    )
    for (name, shape), samples in results.lists.items():
        print(
            f"  {name:<7} {shape:<26} {spread([1e3 / s.rate for s in samples], ',.1f'):>30}"
            f" {_cpu(samples, 'server_us', 1e-3, ',.1f'):>14}"
            f" {_cpu(samples, 'etcd_us', 1e-3, ',.1f'):>12}"
        )
    for name in STORAGES:
        speedup = _ratios(results.lists, (name, CACHE_LIST), (name, STORAGE_LIST))
        cache_cpu = median([s.server_us for s in results.lists[name, CACHE_LIST]])
        storage_cpu = median([s.server_us for s in results.lists[name, STORAGE_LIST]])
        print(
            f"  {name}: cache/storage speed-up per round {spread(speedup, '.2f')};"
            f" server CPU ratio {storage_cpu / cache_cpu:.2f}"
        )
        rows.append(
            Row(
                "engine",
                f"LIST {LIST_OBJECTS:,} on {name}: cache speed-up over storage",
                f"{median(speedup):.2f}x ({1e3 / median([s.rate for s in results.lists[name, CACHE_LIST]]):,.0f} ms)",
                f">= {LIST_TARGET:g}x",
                median(speedup) >= LIST_TARGET,
            )
        )
    return rows


def _report_fans(results: Results) -> list[Row]:
    print(
        f"watch fan-out on sqlite: {FAN_WATCHERS:,} watchers, {FAN_WRITES} creates at"
        f" {FAN_RATE:g}/s; latency = line received - create sent (the server writes to idle"
        " watchers before it acknowledges the create, so from the acknowledgement it is negative)"
    )
    print(
        f"  {'run':<24} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'p99 from ack':>13}"
        f" {'writes':>8} {'writes/s':>9} {'missing':>8} {'ended':>6} {'ack p50 ms':>11}"
        f" {'server µs/delivery':>19} {'client cores':>13}"
    )
    summary: dict[bool, tuple[float, float]] = {}
    for stalled, runs in results.fans.items():
        label = "+1 stalled watcher" if stalled else "all watchers reading"
        p50s, p99s = [], []
        for index, fan in enumerate(runs):
            p50, p99 = _quantile(fan.from_send, 0.5), _quantile(fan.from_send, 0.99)
            p50s.append(p50)
            p99s.append(p99)
            print(
                f"  {label + f' #{index + 1}':<24} {p50 * 1e3:>7.1f} {p99 * 1e3:>7.1f}"
                f" {max(fan.from_send, default=0) * 1e3:>7.1f}"
                f" {_quantile(fan.from_ack, 0.99) * 1e3:>13.1f}"
                f" {f'{fan.written}/{fan.writes}':>8} {fan.write_rate:>9.1f}"
                f" {fan.missing:>8,} {fan.errors:>6}"
                f" {_quantile(fan.write_seconds, 0.5) * 1e3:>11.1f}"
                f" {fan.server_us_per_delivery:>19,.1f} {fan.client_cpu / fan.seconds:>13.2f}"
            )
            if fan.stalled is not None:
                s = fan.stalled
                verdict = "cut off" if s.cut_off else "still open"
                print(
                    f"    stalled watcher {s.waited:.1f}s after the last write: {verdict};"
                    f" server socket {s.server_side.state}, {s.server_side.send_queue:,} B"
                    f" queued to it; client socket {s.client_side.receive_queue:,} B unread;"
                    f" server RSS {s.server_rss_growth / 2**20:+.1f} MiB over the run"
                )
        summary[stalled] = (median(p50s), median(p99s))
    print(
        f"  server after the fan-out runs: {results.server_fds:,} open fds,"
        f" RSS {results.server_rss / 2**20:,.0f} MiB"
    )
    rows: list[Row] = []
    base_p50, base_p99 = summary[False]
    write_rate = median([fan.write_rate for fan in results.fans[False]])
    rows.append(
        Row(
            "engine",
            f"fan-out {FAN_WATCHERS} watchers p50/p99 (ms)",
            f"{base_p50 * 1e3:.0f} / {base_p99 * 1e3:.0f} at {write_rate:.0f} writes/s",
            f"p99 < {FAN_P99_TARGET * 1e3:.0f} ms at {FAN_RATE:g}/s",
            base_p99 < FAN_P99_TARGET and write_rate >= FAN_RATE * 0.9,
        )
    )
    stall_p50, stall_p99 = summary[True]
    allowed = max(base_p99 * STALL_TOLERANCE, base_p99 + 0.005)
    rows.append(
        Row(
            "engine",
            "fan-out with a stalled watcher p50/p99 (ms)",
            f"{stall_p50 * 1e3:.0f} / {stall_p99 * 1e3:.0f}",
            f"p99 <= {allowed * 1e3:.0f} ms (unchanged)",
            stall_p99 <= allowed,
        )
    )
    stalled_runs = [fan.stalled for fan in results.fans[True] if fan.stalled is not None]
    cut = sum(s.cut_off for s in stalled_runs)
    queued = max((s.server_side.send_queue for s in stalled_runs), default=0)
    growth = max((s.server_rss_growth for s in stalled_runs), default=0)
    rows.append(
        Row(
            "engine",
            "stalled watcher closed by the server",
            f"{cut}/{len(stalled_runs)} runs"
            + (
                f"; open: {queued / 1024:,.0f} KiB in its socket, RSS {growth / 2**20:+.0f} MiB"
                if cut < len(stalled_runs)
                else ""
            ),
            "closed",
            cut == len(stalled_runs),
        )
    )
    return rows


# -- profiling ---------------------------------------------------------------------------------------

SCENARIOS = ("list-cache", "list-storage", "create", "update", "fanout")
PROFILE_TOP = 40


def _py_spy_summary(raw: Path, units: int, unit: str) -> None:
    """The hottest leaf frames and the functions most often on the stack, from py-spy's raw output."""
    leaves: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        total += samples
        frames = [
            frame.rsplit(":", 1)[0] + ")" if ":" in frame else frame for frame in stack.split(";")
        ]
        leaves[stack.split(";")[-1]] += samples
        for frame in set(frames[1:]):  # the first frame is the thread's name
            inclusive[frame] += samples
    print(f"py-spy: {total:,} samples over {units:,} {unit}; all threads")
    for title, counter in (("leaf frames", leaves), ("on the stack (inclusive)", inclusive)):
        print(f"top {PROFILE_TOP} {title}, share of samples:")
        for frame, hits in counter.most_common(PROFILE_TOP):
            print(f"  {hits / total:6.1%}  {frame}")


def profile(
    scenario: str, storage: str, seconds: float, py_spy: bool, gc_threshold: int = 0
) -> None:
    """Drive one scenario against a server on ``storage`` running under cProfile (the event loop
    thread, in wall time) or sampled by py-spy (every thread), and print where the time goes."""
    with tempfile.TemporaryDirectory(prefix="engine-profile-") as work_dir:
        work = Path(work_dir)
        prof = work / "server.prof"
        wrapper = gc_wrapper(gc_threshold) if py_spy else ("-m", "cProfile", "-o", str(prof))
        engine = Engine(work, (storage,), wrapper)
        recorder: subprocess.Popen[bytes] | None = None
        raw = work / "py-spy.txt"
        try:
            engine.setup()
            server = engine.servers[storage]
            if py_spy:
                options = ["--threads", "--nonblocking", "--format", "raw", "--rate", "200"]
                target = ["--output", str(raw), "--pid", str(server.pid)]
                recorder = subprocess.Popen(
                    [str(REPO / ".venv/bin/py-spy"), "record", *options, *target],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                time.sleep(0.5)
            units, unit = _profiled_load(engine, storage, scenario, seconds)
            if recorder is not None:
                recorder.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
                recorder.wait(timeout=60)
        finally:
            if recorder is not None and recorder.poll() is None:
                recorder.kill()
            engine.stop_all()
        if py_spy:
            _py_spy_summary(raw, units, unit)
        else:
            print(f"cProfile of the event loop thread; figures are µs per {unit.rstrip('s')}")
            print_cprofile(prof, units)


def _profiled_load(engine: Engine, storage: str, scenario: str, seconds: float) -> tuple[int, str]:
    """Run the scenario for about ``seconds``; (how many units of work, their name)."""
    server = engine.servers[storage]
    if scenario.startswith("list"):
        shape = CACHE_LIST if scenario == "list-cache" else STORAGE_LIST
        path = engine.list_paths(storage)[shape]
        load = drive(server.port, get_request(path), connections=1, seconds=seconds, warmup=0)
        print(f"{scenario} on {storage}: {load.requests} LISTs, {1e3 / load.rate:,.0f} ms each")
        return load.requests, "LISTs"
    if scenario in ("create", "update"):
        if scenario == "create":
            load = drive(
                server.port,
                post_request(collection(CREATE_NS), body_factory("profile")),
                expect=201,
                connections=CONNECTIONS,
                seconds=seconds,
                warmup=0,
            )
        else:
            load = run_uvloop(
                _drive_updates(server.port, engine.updates[storage], seconds, server.pid)
            )
        print(f"{scenario} on {storage}: {load.requests:,} requests, {load.rate:,.0f}/s")
        return load.requests, "requests"
    fan = engine.fan_out(False)
    print(
        f"fan-out on {storage}: {fan.written} writes to {fan.watchers} watchers,"
        f" {fan.delivered:,} deliveries, p99 {_quantile(fan.from_send, 0.99) * 1e3:,.0f} ms"
    )
    return fan.delivered, "deliveries"


SWEEP = (10, 100, 300, 1000)
IN_FLIGHT_SWEEP = (1, 4, 8, 16, 32)


def fan_sweep(gc_threshold: int = 0) -> None:
    """The fan-out (no stalled watcher) at several watcher counts: where the latency target breaks."""
    with tempfile.TemporaryDirectory(prefix="engine-sweep-") as work_dir:
        engine = Engine(Path(work_dir), ("sqlite",), gc_wrapper(gc_threshold))
        try:
            engine.setup()
            print(f"fan-out on sqlite, {FAN_WRITES} creates asked at {FAN_RATE:g}/s")
            print(
                f"  {'watchers':>8} {'writes':>8} {'writes/s':>9} {'p50 ms':>7} {'p99 ms':>7}"
                f" {'server µs/delivery':>19}"
            )
            for watchers in SWEEP:
                fan = engine.fan_out(False, watchers)
                print(
                    f"  {watchers:>8,} {f'{fan.written}/{fan.writes}':>8} {fan.write_rate:>9.1f}"
                    f" {_quantile(fan.from_send, 0.5) * 1e3:>7.1f}"
                    f" {_quantile(fan.from_send, 0.99) * 1e3:>7.1f}"
                    f" {fan.server_us_per_delivery:>19,.1f}"
                )
        finally:
            engine.stop_all()


def write_sweep(rounds: int = ROUNDS) -> None:
    """The etcd write phases at several numbers in flight: from latency-bound (one caller waits on
    etcd's commit) to CPU-bound (the machine's cores are the limit), the ratios to the raw CAS."""
    with tempfile.TemporaryDirectory(prefix="engine-write-sweep-") as work_dir:
        engine = Engine(Path(work_dir), ("etcd",))
        try:
            engine.setup()
            assert engine.raw_etcd is not None
            raw_cas = engine.raw_etcd.cas
            phases: dict[Phase, Callable[[], Sample]] = {}
            for in_flight in IN_FLIGHT_SWEEP:
                level = str(in_flight)
                phases[level, RAW_CAS] = partial(engine._raw_etcd, raw_cas, in_flight)
                for name in ("etcd", FLOOR):
                    phases[level, f"{name} {CREATE}"] = partial(engine._create, name, in_flight)
                    phases[level, f"{name} {UPDATE}"] = partial(engine._update, name, in_flight)
            samples = interleave(phases, rounds)
        finally:
            engine.stop_all()
    print(f"etcd writes by number in flight: {rounds} interleaved rounds x {WRITE_SECONDS:g}s;")
    print("  x raw = per-round ratio to the raw aetcd CAS at the same number in flight")
    print(
        f"  {'in flight':>9} {'raw CAS/s':>10} {'server CREATE x raw':>20} {'UPDATE x raw':>13}"
        f" {'floor CREATE x raw':>19} {'UPDATE x raw':>13} {'server µs/create':>17}"
    )
    for in_flight in IN_FLIGHT_SWEEP:
        level = str(in_flight)
        raw = (level, RAW_CAS)
        factors = [
            median(_ratios(samples, (level, f"{name} {phase}"), raw))
            for name in ("etcd", FLOOR)
            for phase in (CREATE, UPDATE)
        ]
        print(
            f"  {in_flight:>9} {median([s.rate for s in samples[raw]]):>10,.0f}"
            f" {factors[0]:>20.2f} {factors[1]:>13.2f} {factors[2]:>19.2f} {factors[3]:>13.2f}"
            f" {_cpu(samples[level, f'etcd {CREATE}'], 'server_us'):>17}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--profile", choices=SCENARIOS, help="profile one scenario instead")
    parser.add_argument("--storage", choices=STORAGES, default="sqlite")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--py-spy", action="store_true", help="sample all threads with py-spy")
    parser.add_argument(
        "--server-gc-threshold",
        type=int,
        default=0,
        metavar="N",
        help="start the servers with gc.set_threshold(N, 20, 100) (diagnostic; not with cProfile)",
    )
    parser.add_argument(
        "--fan-sweep", action="store_true", help=f"only the fan-out, at {SWEEP} watchers"
    )
    parser.add_argument(
        "--write-sweep",
        action="store_true",
        help=f"only the etcd writes, at {IN_FLIGHT_SWEEP} in flight",
    )
    parser.add_argument(
        "--only",
        type=phase_names,
        action="append",
        metavar="PHASES",
        help=f"run and report only these phases ({', '.join(sorted(PHASES))}; repeatable or"
        " comma-separated)",
    )
    options = parser.parse_args()
    if options.fan_sweep:
        fan_sweep(options.server_gc_threshold)
    elif options.write_sweep:
        write_sweep()
    elif options.profile:
        profile(
            options.profile,
            options.storage,
            options.seconds,
            options.py_spy,
            options.server_gc_threshold,
        )
    else:
        only = frozenset[str]().union(*options.only) if options.only else PHASES
        rows = run(gc_threshold=options.server_gc_threshold, only=only)
        if rows:  # the rows `python -m bench engine` would put in its summary
            print("summary:")
            print_rows(rows)


if __name__ == "__main__":
    main()
