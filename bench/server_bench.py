"""The real server under load, against the ceilings it is held to, side by side in one run.

Starts ``apiforge serve`` twice (``--storage sqlite`` and ``--storage memory``) and the reference
hello-JSON app of bench/hello_app.py (raw ASGI on the same uvicorn + httptools + uvloop stack), then
runs interleaved rounds of:

- hello: ``{"hello":"world"}`` from the reference app (the ceiling for a GET); also the same app
  started the way apiserver/server/cli.py starts uvicorn (which ends up on the stdlib event loop);
- GET of one ~1.6 KiB CronTab, LIST of 100 of them, and CREATE of CronTabs with unique names, on
  each storage;
- the raw sqlite3 compare-and-insert rate of storage_bench (WAL, synchronous=FULL: the durability
  SQLiteStorage gives), with a value of the stored CronTab's size.

Every phase is bounded by a request count and by time. Reported per phase: requests/s, server CPU
µs per request (utime+stime of the server process over the phase: the figure noise disturbs least),
the cores the server used, and the client's own ceiling (requests/s per core of client CPU), which
shows the load generator was not the bottleneck. Targets: ready < 2 s, GET >= 0.5x hello,
create on SQLite >= 0.5x raw SQLite compare-and-insert.

Run from the repository root: ``.venv/bin/python -m bench.server_bench``.
"""

from __future__ import annotations

import math
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench.common import (
    ChildServer,
    Row,
    free_port,
    maps_module,
    median,
    print_rows,
    rotated,
    spread,
)
from bench.loadgen import Load, drive, get_request, post_request
from bench.storage_bench import raw_sqlite_rate

ROUNDS = 3
SECONDS = 0.8
CONNECTIONS = 32
LIST_SIZE = 100
READY_TARGET = 2.0
GET_TARGET = 0.5
CREATE_TARGET = 0.5

GROUP_PATH = "/apis/stable.example.com/v1"
GET_NAMESPACE, LIST_NAMESPACE, CREATE_NAMESPACE = "default", "bench-list", "bench-create"
GET_NAME = "bench-get"
MEMORY_UVLOOP = "memory+uvloop"
UVLOOP_WRAPPER = (
    "-c",
    "import asyncio, runpy, sys, uvloop; asyncio.set_event_loop_policy(uvloop.EventLoopPolicy());"
    " sys.argv = ['apiforge', *sys.argv[3:]]; runpy.run_module('apiforge', run_name='__main__')",
)
"""Runs ``apiforge serve`` with uvloop as the event loop policy, i.e. as cli.py means to (its
``asyncio.run`` ignores uvicorn's ``loop="uvloop"``): what fixing that would buy a GET."""


def crontab(name: str) -> dict[str, object]:
    """A CronTab of about 1.6 KiB once the server has added its metadata, like a small Deployment."""
    labels = {
        "app.kubernetes.io/name": "nightly-report",
        "app.kubernetes.io/instance": "nightly-report-prod",
        "app.kubernetes.io/version": "1.24.3",
        "app.kubernetes.io/component": "batch",
        "app.kubernetes.io/part-of": "reporting",
        "app.kubernetes.io/managed-by": "helm",
        "team": "data-platform",
        "environment": "production",
    }
    applied = orjson.dumps(
        {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "cronSpec": "*/5 * * * *",
                "image": "registry.example.com/reports/nightly:1.24.3",
                "replicas": 3,
            },
        }
    ).decode()
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": applied,
                "meta.helm.sh/release-name": "nightly-report-prod",
                "meta.helm.sh/release-namespace": "reporting",
                "reports.example.com/description": "Builds the nightly usage report from the"
                " warehouse and mails it to the owners listed in the report catalogue.",
            },
            "finalizers": ["reports.example.com/cleanup"],
        },
        "spec": {
            "cronSpec": "*/5 * * * *",
            "image": "registry.example.com/reports/nightly:1.24.3",
            "replicas": 3,
        },
    }


def body_factory(tag: str) -> Callable[[int], bytes]:
    """Create bodies with names unique to ``tag`` (one tag per phase run)."""
    template = orjson.dumps(crontab("NAME-PLACEHOLDER"))
    return lambda i: template.replace(b"NAME-PLACEHOLDER", f"{tag}-{i}".encode())


@dataclass(frozen=True)
class Sample:
    """One phase of one round. ``load`` is None for the in-process raw SQLite phase."""

    rate: float
    load: Load | None = None


class Bench:
    """The servers and seeded data of one run."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.servers: dict[str, ChildServer] = {}
        self.ready: dict[str, list[float]] = {}
        self.object_size = 0
        self.list_size = 0
        self.runs = 0

    # -- servers -----------------------------------------------------------------------------------

    def start_hello(self, name: str, loop: str) -> None:
        port = free_port()
        argv = ["-m", "bench.hello_app", "--port", str(port), "--loop", loop]
        server = ChildServer(name, argv, port, self.work / f"{name}.log")
        self._start(server, None)

    def start_apiserver(self, storage: str, name: str = "", wrapper: tuple[str, ...] = ()) -> None:
        """Start ``apiforge serve`` as ``name`` (default: the storage); ``wrapper`` goes before
        ``-m apiforge`` (cProfile's options, or UVLOOP_WRAPPER)."""
        name = name or storage
        port = free_port()
        data_dir = self.work / f"data-{name}"
        argv = [
            *wrapper,
            "-m",
            "apiforge",
            "serve",
            "--data-dir",
            str(data_dir),
            "--bind-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--storage",
            storage,
            "--insecure-serving",  # the plain-HTTP figures (bench.tls_bench measures TLS)
        ]
        (data_dir / "admin.kubeconfig").unlink(missing_ok=True)
        server = ChildServer(name, argv, port, self.work / f"apiserver-{name}.log")
        self._start(server, data_dir / "admin.kubeconfig")

    def _start(self, server: ChildServer, ready_file: Path | None) -> None:
        self.ready.setdefault(server.name, []).append(server.start(ready_file))
        self.servers[server.name] = server

    def restart(self, name: str) -> None:
        """Stop and start again on the same data: the start-up time with a populated database."""
        self.servers.pop(name).stop()
        self.start_apiserver(name)

    def stop_all(self) -> None:
        for server in self.servers.values():
            server.stop()

    # -- data --------------------------------------------------------------------------------------

    def seed(self, storage: str) -> None:
        server = self.servers[storage]
        for namespace in (LIST_NAMESPACE, CREATE_NAMESPACE):
            body = orjson.dumps(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )
            self._expect(
                drive(
                    server.port,
                    post_request("/api/v1/namespaces", lambda _i, b=body: b),
                    expect=201,
                    connections=1,
                    limit=1,
                    warmup=0,
                ),
                1,
            )
        get_body = orjson.dumps(crontab(GET_NAME))
        self._expect(
            drive(
                server.port,
                post_request(self.collection(GET_NAMESPACE), lambda _i: get_body),
                expect=201,
                connections=1,
                limit=1,
                warmup=0,
            ),
            1,
        )
        listed = drive(
            server.port,
            post_request(self.collection(LIST_NAMESPACE), body_factory("item")),
            expect=201,
            connections=8,
            limit=LIST_SIZE,
            seconds=30,
            warmup=0,
        )
        self._expect(listed, LIST_SIZE)

    @staticmethod
    def _expect(load: Load, count: int) -> None:
        if load.requests != count or load.failures:
            raise RuntimeError(f"seeding failed ({load.requests}/{count}): {load.first_failure}")

    @staticmethod
    def collection(namespace: str) -> str:
        return f"{GROUP_PATH}/namespaces/{namespace}/crontabs"

    # -- phases ------------------------------------------------------------------------------------

    def phases(self) -> dict[str, Callable[[], Sample]]:
        phases: dict[str, Callable[[], Sample]] = {
            "hello (uvloop)": lambda: self._get("hello", "/hello"),
            "hello (cli.py's loop)": lambda: self._get("hello-cli-loop", "/hello"),
        }
        get_path = f"{self.collection(GET_NAMESPACE)}/{GET_NAME}"
        phases[f"GET {MEMORY_UVLOOP}"] = lambda: self._get(MEMORY_UVLOOP, get_path)
        for storage in ("sqlite", "memory"):
            phases[f"GET {storage}"] = lambda s=storage, p=get_path: self._get(s, p)
            list_path = self.collection(LIST_NAMESPACE)
            phases[f"LIST {LIST_SIZE} {storage}"] = lambda s=storage, p=list_path: self._get(s, p)
            phases[f"CREATE {storage}"] = lambda s=storage: self._create(s)
        phases["raw SQLite CAS"] = self._raw_sqlite
        return phases

    def _get(self, name: str, path: str) -> Sample:
        server = self.servers[name]
        load = drive(
            server.port,
            get_request(path),
            connections=CONNECTIONS,
            seconds=SECONDS,
            server_pid=server.pid,
        )
        return self._checked(name, load)

    def _create(self, name: str) -> Sample:
        server = self.servers[name]
        self.runs += 1
        load = drive(
            server.port,
            post_request(self.collection(CREATE_NAMESPACE), body_factory(f"r{self.runs}")),
            expect=201,
            connections=CONNECTIONS,
            seconds=SECONDS,
            server_pid=server.pid,
        )
        return self._checked(name, load)

    def _raw_sqlite(self) -> Sample:
        self.runs += 1
        data_dir = self.work / f"raw-{self.runs}"
        data_dir.mkdir()
        value = b"v" * self.object_size  # the stored CronTab's size
        return Sample(raw_sqlite_rate(data_dir, seconds=SECONDS, value=value))

    @staticmethod
    def _checked(name: str, load: Load) -> Sample:
        if load.failures:
            raise RuntimeError(
                f"{name}: {load.failures} failed requests, first: {load.first_failure}"
            )
        return Sample(load.rate, load)

    def measure_sizes(self) -> None:
        server = self.servers["sqlite"]
        for path, attribute in (
            (f"{self.collection(GET_NAMESPACE)}/{GET_NAME}", "object_size"),
            (self.collection(LIST_NAMESPACE), "list_size"),
        ):
            body = _fetch(server.port, path)
            setattr(self, attribute, len(body))


def _fetch(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n".encode()
        )
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).partition(b"\r\n\r\n")[2]


def run(rounds: int = ROUNDS) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="server-bench-") as work_dir:
        bench = Bench(Path(work_dir))
        try:
            bench.start_hello("hello", "uvloop")
            bench.start_hello("hello-cli-loop", "asyncio")
            for storage in ("sqlite", "memory"):
                bench.start_apiserver(storage)
                bench.seed(storage)
            bench.start_apiserver("memory", MEMORY_UVLOOP, UVLOOP_WRAPPER)
            bench.seed(MEMORY_UVLOOP)
            bench.measure_sizes()
            loops = {
                name: maps_module(server.pid, "uvloop") for name, server in bench.servers.items()
            }
            phases = bench.phases()
            samples: dict[str, list[Sample]] = {name: [] for name in phases}
            for round_number in range(rounds):
                for name in rotated(list(phases), round_number):
                    samples[name].append(phases[name]())
            bench.restart("sqlite")
        finally:
            bench.stop_all()
    return report(bench, samples, loops)


def _per_round(samples: dict[str, list[Sample]], top: str, bottom: str) -> list[float]:
    return [a.rate / b.rate for a, b in zip(samples[top], samples[bottom], strict=True)]


def _cpu(samples: list[Sample]) -> float:
    return median([s.load.server_us for s in samples if s.load]) if samples[0].load else math.nan


def report(bench: Bench, samples: dict[str, list[Sample]], loops: dict[str, bool]) -> list[Row]:
    print(
        f"server bench: {len(next(iter(samples.values())))} interleaved rounds x {SECONDS:g}s per phase,"
        f" {CONNECTIONS} keep-alive connections; GET body {bench.object_size:,} B,"
        f" LIST body {bench.list_size:,} B"
    )
    print(
        f"  {'phase':<22} {'req/s median (min-max)':>24} {'server µs/req':>14} {'server cores':>13}"
        f" {'client ceiling/s':>17} {'rest of machine':>16}"
    )
    for name, phase_samples in samples.items():
        loads = [s.load for s in phase_samples if s.load]
        cells = ["-"] * 4
        if loads:
            cells = [
                f"{median([x.server_us for x in loads]):,.0f}",
                f"{median([x.server_cores for x in loads]):.2f}",
                f"{median([x.client_ceiling for x in loads]):,.0f}",
                f"{median([x.other_cores for x in loads]):.2f}",
            ]
        print(
            f"  {name:<22} {spread([s.rate for s in phase_samples]):>24} {cells[0]:>14}"
            f" {cells[1]:>13} {cells[2]:>17} {cells[3]:>16}"
        )
    print(
        "  event loop in use (uvloop mapped into the process): "
        + ", ".join(f"{name}={'uvloop' if on else 'asyncio'}" for name, on in loops.items())
    )

    rows: list[Row] = []
    for name, times in bench.ready.items():
        if name in ("sqlite", "memory"):
            for index, seconds in enumerate(times):
                label = "restart, populated db" if index else "fresh data dir"
                rows.append(
                    Row(
                        "server",
                        f"ready, {name}, {label} (s)",
                        f"{seconds:.2f}",
                        f"< {READY_TARGET:.0f} s",
                        seconds < READY_TARGET,
                    )
                )
    hello_ready = bench.ready["hello"][0]
    rows.append(Row("server", "ready, hello app (floor) (s)", f"{hello_ready:.2f}"))
    hello = samples["hello (uvloop)"]
    rows.append(Row("server", "hello req/s", spread([s.rate for s in hello])))
    rows.append(
        Row(
            "server",
            "load client ceiling req/s/core",
            f"{median([s.load.client_ceiling for s in hello if s.load]):,.0f}",
        )
    )
    rows.append(
        Row(
            "server",
            "hello cli.py-loop / hello uvloop",
            spread(_per_round(samples, "hello (cli.py's loop)", "hello (uvloop)"), ".2f"),
        )
    )
    hello_cpu = _cpu(hello)
    for storage in ("sqlite", "memory"):
        ratio = _per_round(samples, f"GET {storage}", "hello (uvloop)")
        rows.append(
            Row(
                "server",
                f"GET {storage} / hello (req/s)",
                spread(ratio, ".2f"),
                f">= {GET_TARGET}",
                median(ratio) >= GET_TARGET,
            )
        )
        cpu_ratio = _cpu(samples[f"GET {storage}"]) / hello_cpu
        rows.append(
            Row(
                "server",
                f"GET {storage} / hello (server CPU/req)",
                f"{cpu_ratio:.2f}x",
                f"<= {1 / GET_TARGET:.1f}x",
                cpu_ratio <= 1 / GET_TARGET,
            )
        )
    forced = samples[f"GET {MEMORY_UVLOOP}"]
    rows.append(
        Row(
            "server",
            "GET memory, uvloop forced / GET memory (req/s; CPU/req)",
            f"{median(_per_round(samples, f'GET {MEMORY_UVLOOP}', 'GET memory')):.2f};"
            f" {_cpu(forced) / _cpu(samples['GET memory']):.2f}x",
        )
    )
    for storage in ("sqlite", "memory"):
        name = f"LIST {LIST_SIZE} {storage}"
        rows.append(
            Row(
                "server",
                f"{name} req/s (µs CPU/req)",
                f"{median([s.rate for s in samples[name]]):,.0f} ({_cpu(samples[name]):,.0f})",
            )
        )
    create = _per_round(samples, "CREATE sqlite", "raw SQLite CAS")
    rows.append(
        Row(
            "server",
            "raw SQLite CAS creates/s",
            spread([s.rate for s in samples["raw SQLite CAS"]]),
        )
    )
    rows.append(
        Row(
            "server",
            f"CREATE sqlite ({CONNECTIONS} conc.) creates/s",
            spread([s.rate for s in samples["CREATE sqlite"]]),
        )
    )
    rows.append(
        Row(
            "server",
            "CREATE sqlite / raw SQLite CAS",
            spread(create, ".2f"),
            f">= {CREATE_TARGET}",
            median(create) >= CREATE_TARGET,
        )
    )
    rows.append(
        Row(
            "server",
            "CREATE memory creates/s (µs CPU/req)",
            f"{median([s.rate for s in samples['CREATE memory']]):,.0f}"
            f" ({_cpu(samples['CREATE memory']):,.0f})",
        )
    )
    return rows


def main() -> None:
    rows = run()
    print("summary")
    print_rows(rows)


if __name__ == "__main__":
    main()
