"""The processes and data of one engine bench run: a throwaway etcd, the servers (on etcd, on etcd with
workers, on SQLite, and the transport floor), the CronTabs written straight into each storage before its
server starts, and the objects the UPDATE phases rewrite."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import orjson

from apiserver.machinery.scheme import ResourceType
from apiserver.registry.keys import object_key
from apiserver.registry.store import Store
from apiserver.storage import EtcdStorage, SQLiteStorage, Storage
from bench.common import ChildServer, cpu_seconds, free_port, run_uvloop
from bench.engine.plainhttp import ensure_namespace, http
from bench.engine.raw import RawEtcd, RawSQLiteReads
from bench.engine.sample import Sample
from bench.engine.settings import (
    CACHE_LIST,
    CONNECTIONS,
    CREATE_NS,
    ETCD_WORKERS,
    FAN_NS,
    FLOOR,
    FLOOR_PREFIX,
    LIST_NS,
    LIST_OBJECTS,
    POPULATE_CONCURRENCY,
    SERVERS,
    STORAGE_LIST,
    STORAGES,
    UPDATE_NS,
    collection,
    list_item,
    storage_of,
)
from bench.loadgen import Load, RequestFactory, drive
from bench.server_bench import crontab
from tests.etcdproc import EtcdProcess


def crontab_resource() -> ResourceType:
    from generated.server import build_scheme

    resource = build_scheme().resource("stable.example.com", "crontabs")
    assert resource is not None
    return resource


async def populate(storage: Storage, resource: ResourceType, namespace: str, count: int) -> int:
    """Store ``count`` CronTabs as the server would (Store.create: admission, uid, timestamps, generation,
    the storage version's JSON); the size in bytes of one stored value."""
    store = Store(resource, storage)
    names = iter(range(count))
    size = 0

    async def creator() -> None:
        nonlocal size
        for index in names:
            obj: dict[str, Any] = crontab(list_item(index))
            await store.create(namespace, obj)
        kv = await storage.get(object_key(resource, namespace, list_item(0)))
        size = len(kv.value) if kv is not None else 0

    await storage.start()
    try:
        await asyncio.gather(*(creator() for _ in range(POPULATE_CONCURRENCY)))
    finally:
        await storage.close()
    return size


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
        self.read_keys = [object_key(resource, LIST_NS, list_item(i)) for i in range(LIST_OBJECTS)]
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
        argv += [
            "--insecure-serving"
        ]  # plain HTTP, as the reference servers (bench.tls_bench: TLS)
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

    # -- measuring ---------------------------------------------------------------------------------

    def etcd_cpu(self) -> float:
        """The etcd process's CPU seconds so far (0 without one): etcd's share of a phase."""
        return cpu_seconds(self.etcd.process.pid) if self.etcd.process is not None else 0.0

    def drive(
        self, name: str, factory: RequestFactory, *, connections: int, seconds: float, limit: int,
        expect: int = 200,
    ) -> Sample:  # fmt: skip
        """Requests from ``factory`` to server ``name`` (bench.loadgen, no warm-up): one phase's sample."""
        server = self.servers[name]
        before = self.etcd_cpu()
        load = drive(
            server.port,
            factory,
            expect=expect,
            connections=connections,
            seconds=seconds,
            limit=limit,
            warmup=0,
            server_pid=server.pid,
        )
        return self.sample(name, load, before)

    def sample(self, name: str, load: Load, etcd_before: float) -> Sample:
        """One phase's sample from the load it drove against server ``name`` (etcd CPU since ``etcd_before``)."""
        if load.failures or not load.requests:
            raise RuntimeError(f"{name}: {load.failures} failed, first: {load.first_failure}")
        etcd_us = float("nan")
        if storage_of(name) == "etcd":
            etcd_us = (self.etcd_cpu() - etcd_before) / load.requests * 1e6
        return Sample(load.rate, load.server_us, etcd_us, load.client_cpu / load.requests * 1e6)


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
