"""Where a request's time goes: the real server under one kind of load, profiled.

``python -m bench.profile_server PHASE [--storage sqlite|memory] [--seconds S] [--py-spy] [--tls]``,
PHASE one of get, list, create. Starts ``apiforge serve`` under cProfile (main thread only: the event loop,
where the per-request Python work runs), seeds it as bench/server_bench.py does, drives PHASE for S
seconds with the same load generator, stops the server (SIGTERM, so the profile is written) and
prints the top functions by own time and by cumulative time, in µs per request. With ``--py-spy``
it instead samples every thread (SQLite's writer and reader threads too) with py-spy, if installed,
and prints the hottest leaf frames. With ``--tls`` (get only) the server is `compare`'s TLS one: a bearer
token of ``--token-auth-file`` for a user bound to cluster-admin by RBAC (bench/compare.py).
Not part of ``python -m bench``: profiling slows the server.
"""

from __future__ import annotations

import argparse
import collections
import io
import pstats
import shutil
import subprocess
import tempfile
from pathlib import Path

import orjson

from bench.common import ChildServer, free_port
from bench.compare import GROUP, TOKEN_LINE, Served, namespace, served_tls
from bench.loadgen import Load, drive, get_request, post_request
from bench.server_bench import (
    CONNECTIONS,
    CREATE_NAMESPACE,
    GET_NAME,
    GET_NAMESPACE,
    LIST_NAMESPACE,
    Bench,
    body_factory,
    crontab,
)

TOP = 45


def load(bench: Bench, storage: str, phase: str, seconds: float) -> Load:
    server = bench.servers[storage]
    if phase == "get":
        factory = get_request(f"{bench.collection(GET_NAMESPACE)}/{GET_NAME}")
    elif phase == "list":
        factory = get_request(bench.collection(LIST_NAMESPACE))
    else:
        factory = post_request(bench.collection(CREATE_NAMESPACE), body_factory("profile"))
    expect = 201 if phase == "create" else 200
    return drive(
        server.port,
        factory,
        expect=expect,
        connections=CONNECTIONS,
        seconds=seconds,
        server_pid=server.pid,
        limit=10_000_000,
        warmup=0,  # every request the server saw after seeding is counted
    )


def start_tls(work: Path, storage: str, wrapper: tuple[str, ...]) -> Served:
    """`compare`'s TLS server (token file, RBAC-bound user) with one CronTab to GET, as compare seeds it."""
    tokens = work / "tokens.csv"
    tokens.write_text(TOKEN_LINE)
    tokens.chmod(0o600)
    data_dir = work / "data-tls"
    port = free_port()
    argv = [
        *wrapper,
        *("-m", "apiforge", "serve", "--data-dir", str(data_dir), "--storage", storage),
        *("--bind-address", "127.0.0.1", "--port", str(port), "--token-auth-file", str(tokens)),
    ]
    server = ChildServer("tls", argv, port, work / "apiserver-tls.log")
    server.start(ready_file=data_dir / "admin.kubeconfig", probe=False)
    served = served_tls("tls", server, data_dir / "admin.kubeconfig", 60)
    path = f"{GROUP}/{namespace('get')}/crontabs"
    for request_path, body in (
        ("/api/v1/namespaces", {"metadata": {"name": namespace("get")}}),
        (path, crontab(GET_NAME)),
    ):
        encoded = orjson.dumps(body)
        seeded = served.drive(
            post_request(request_path, lambda _i, b=encoded: b, served.headers),
            expect=201,
            connections=1,
            limit=1,
            warmup=0,
        )
        if seeded.failures:
            raise RuntimeError(f"seeding failed: {seeded.first_failure}")
    return served


def drive_tls(served: Served, seconds: float) -> Load:
    path = f"{GROUP}/{namespace('get')}/crontabs/{GET_NAME}"
    return served.drive(
        get_request(path, served.headers),
        expect=200,
        connections=CONNECTIONS,
        seconds=seconds,
        limit=10_000_000,
        warmup=0,
    )


def print_cprofile(path: Path, requests: int) -> None:
    stats = pstats.Stats(str(path), stream=io.StringIO())
    entries = stats.stats  # type: ignore[attr-defined]
    rows = []
    for (file, line, function), (_cc, calls, own, cumulative, _callers) in entries.items():
        where = f"{Path(file).name}:{line}({function})" if line else function
        rows.append((where, calls, own, cumulative))
    for title, key in (("own time", 2), ("cumulative time", 3)):
        print(f"top {TOP} by {title}, µs per request (calls per request):")
        for where, calls, own, cumulative in sorted(rows, key=lambda r: r[key], reverse=True)[:TOP]:
            value = own if key == 2 else cumulative
            print(f"  {value / requests * 1e6:8.1f}  ({calls / requests:5.1f})  {where}")


def run_py_spy(bench: Bench, storage: str, phase: str, seconds: float, work: Path) -> None:
    py_spy = shutil.which("py-spy") or str(
        Path(__file__).resolve().parent.parent / ".venv/bin/py-spy"
    )
    if not Path(py_spy).exists():
        raise SystemExit("py-spy is not installed (.venv/bin/pip install py-spy)")
    raw = work / "py-spy.txt"
    recorder = subprocess.Popen(
        [
            py_spy,
            "record",
            "--threads",
            "--nonblocking",
            "--format",
            "raw",
            "--rate",
            "250",
            "--duration",
            str(int(seconds) + 1),
            "--output",
            str(raw),
            "--pid",
            str(bench.servers[storage].pid),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    result = load(bench, storage, phase, seconds)
    recorder.wait(timeout=seconds + 30)
    print(
        f"{phase} on {storage}: {result.rate:,.0f} req/s, {result.server_us:,.0f} µs server CPU/req"
    )
    leaves: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        frames = stack.split(";")
        leaves[frames[-1]] += int(count)
    print(f"py-spy: {total} samples; top {TOP} leaf frames (share of samples, all threads):")
    for frame, count in leaves.most_common(TOP):
        print(f"  {count / total:6.1%}  {frame}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_server")
    parser.add_argument("phase", choices=["get", "list", "create"])
    parser.add_argument("--storage", choices=["sqlite", "memory"], default="sqlite")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--py-spy", action="store_true", help="sample all threads with py-spy")
    parser.add_argument("--save", type=Path, help="also keep the cProfile output here (for pstats)")
    parser.add_argument("--tls", action="store_true", help="compare's TLS server, token and RBAC")
    options = parser.parse_args(argv)
    if options.tls and (options.phase != "get" or options.py_spy):
        parser.error("--tls profiles a GET under cProfile only")
    with tempfile.TemporaryDirectory(prefix="profile-server-") as work_dir:
        work = Path(work_dir)
        bench = Bench(work)
        profile = work / "server.prof"
        wrapper = () if options.py_spy else ("-m", "cProfile", "-o", str(profile))
        if options.tls:
            served = start_tls(work, options.storage, wrapper)
            try:
                result = drive_tls(served, options.seconds)
            finally:
                served.server.stop()
            report(options, "get over TLS", result, profile)
            return
        try:
            bench.start_apiserver(options.storage, wrapper=wrapper)
            bench.seed(options.storage)
            if options.py_spy:
                run_py_spy(bench, options.storage, options.phase, options.seconds, work)
                return
            result = load(bench, options.storage, options.phase, options.seconds)
        finally:
            bench.stop_all()
        report(options, options.phase, result, profile)


def report(options: argparse.Namespace, phase: str, result: Load, profile: Path) -> None:
    print(
        f"{phase} on {options.storage} under cProfile: {result.requests:,} requests,"
        f" {result.rate:,.0f} req/s, {result.server_us:,.0f} µs server CPU/req (inflated by profiling)"
    )
    if options.save:
        shutil.copyfile(profile, options.save)
    print_cprofile(profile, result.requests)


if __name__ == "__main__":
    main()
