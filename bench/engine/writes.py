"""Phase 1: writes and point reads with 32 in flight, each server phase beside the raw ceiling of its storage
(CREATE and UPDATE against the raw CAS, GET against the raw GET), and the transport floor on the same etcd."""

from __future__ import annotations

import time
from collections.abc import Callable

from bench.common import run_uvloop
from bench.engine.raw import RawSQLiteReads
from bench.engine.sample import Phase, Sample
from bench.engine.servers import Engine
from bench.engine.settings import (
    CONNECTIONS,
    CREATE,
    CREATE_NS,
    ETCD_WORKERS,
    FLOOR,
    GET,
    LIST_NS,
    LIST_OBJECTS,
    RAW_CAS,
    RAW_GET,
    RAW_PUT,
    READ_LIMIT,
    STORAGES,
    UPDATE,
    WRITE_LIMIT,
    WRITE_SECONDS,
    collection,
    list_item,
)
from bench.engine.updates import drive_updates
from bench.etcd_bench import Op, measure_phase
from bench.loadgen import RequestFactory, get_request, post_request
from bench.server_bench import body_factory
from bench.storage_bench import raw_sqlite_rate


def write_phases(engine: Engine) -> dict[Phase, Callable[[], Sample]]:
    """The writes and point reads of phase 1, grouped by storage, each raw phase before the
    server's (the table's order; interleave() rotates the running order). Writes the raw SQLite
    read database first."""
    assert engine.raw_etcd is not None
    engine.raw_sqlite_reads = RawSQLiteReads(
        engine.work / "raw-reads.db", engine.read_keys, engine.value
    )
    engine.raw_sqlite_reads.prepare()
    raw_etcd = engine.raw_etcd
    gets = _cycle(
        [get_request(f"{collection(LIST_NS)}/{list_item(i)}")(0) for i in range(LIST_OBJECTS)]
    )
    phases: dict[Phase, Callable[[], Sample]] = {
        ("etcd", RAW_CAS): lambda: raw_etcd_phase(engine, raw_etcd.cas),
        ("etcd", RAW_PUT): lambda: raw_etcd_phase(engine, raw_etcd.put),
        ("etcd", RAW_GET): lambda: raw_etcd_phase(engine, raw_etcd.get),
    }
    for name in (*STORAGES, ETCD_WORKERS):
        if name == "sqlite":
            phases[name, RAW_CAS] = lambda: _raw_sqlite(engine)
            phases[name, RAW_GET] = lambda: _raw_sqlite_get(engine)
        phases[name, CREATE] = lambda n=name: create_phase(engine, n)  # type: ignore[misc]
        phases[name, UPDATE] = lambda n=name: update_phase(engine, n)  # type: ignore[misc]
        phases[name, GET] = lambda n=name: _get(engine, n, gets)  # type: ignore[misc]
    phases[FLOOR, CREATE] = lambda: create_phase(engine, FLOOR)
    phases[FLOOR, UPDATE] = lambda: update_phase(engine, FLOOR)
    return phases


def raw_etcd_phase(engine: Engine, op: Op, in_flight: int = CONNECTIONS) -> Sample:
    """One RawEtcd op with ``in_flight`` callers for WRITE_SECONDS; etcd's CPU per op from /proc,
    this process's (gRPC threads included) from measure_phase."""
    assert engine.raw_etcd is not None
    before, started = engine.etcd_cpu(), time.perf_counter()
    sample = engine.raw_etcd.call(measure_phase(op, in_flight, WRITE_SECONDS))
    ops = sample.rate * (time.perf_counter() - started)
    etcd_us = (engine.etcd_cpu() - before) / ops * 1e6
    return Sample(sample.rate, etcd_us=etcd_us, client_us=sample.cpu_us)


def _raw_sqlite(engine: Engine) -> Sample:
    engine.runs += 1
    data_dir = engine.work / f"raw-{engine.runs}"
    data_dir.mkdir()
    return Sample(raw_sqlite_rate(data_dir, seconds=WRITE_SECONDS, value=engine.value))


def _raw_sqlite_get(engine: Engine) -> Sample:
    assert engine.raw_sqlite_reads is not None
    return engine.raw_sqlite_reads.measure(WRITE_SECONDS, READ_LIMIT)


def create_phase(engine: Engine, name: str, in_flight: int = CONNECTIONS) -> Sample:
    engine.runs += 1
    creates = post_request(collection(CREATE_NS), body_factory(f"c{engine.runs}"))
    return engine.drive(
        name, creates, expect=201, connections=in_flight, seconds=WRITE_SECONDS, limit=WRITE_LIMIT
    )


def update_phase(engine: Engine, name: str, in_flight: int = CONNECTIONS) -> Sample:
    """PUTs over the first ``in_flight`` of the server's update objects (one connection each)."""
    server = engine.servers[name]
    before = engine.etcd_cpu()
    objects = engine.updates[name][:in_flight]
    load = run_uvloop(drive_updates(server.port, objects, WRITE_SECONDS, server.pid))
    engine.updates[name][:in_flight] = objects  # their latest states, for the next PUTs
    return engine.sample(name, load, before)


def _get(engine: Engine, name: str, gets: RequestFactory) -> Sample:
    """GETs of the LIST phase's CronTabs (``gets``: request i for item i mod their count), so
    the 32 connections read different objects that exist."""
    return engine.drive(
        name, gets, connections=CONNECTIONS, seconds=WRITE_SECONDS, limit=READ_LIMIT
    )


def _cycle(requests: list[bytes]) -> RequestFactory:
    """A load generator factory sending ``requests`` in turn."""
    return lambda i: requests[i % len(requests)]
