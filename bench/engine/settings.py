"""The engine bench's sizes, durations and targets, the servers it starts and the names of its phases."""

from __future__ import annotations

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
