"""Where a request's time goes: the real server under one kind of load, profiled.

``python -m bench.profile_server PHASE [--storage sqlite|memory] [--seconds S] [--py-spy]``, PHASE
one of get, list, create. Starts ``apiforge serve`` under cProfile (main thread only: the event loop,
where the per-request Python work runs), seeds it as bench/server_bench.py does, drives PHASE for S
seconds with the same load generator, stops the server (SIGTERM, so the profile is written) and
prints the top functions by own time and by cumulative time, in µs per request. With ``--py-spy``
it instead samples every thread (SQLite's writer and reader threads too) with py-spy, if installed,
and prints the hottest leaf frames. Not part of ``python -m bench``: profiling slows the server.
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

from bench.loadgen import Load, drive, get_request, post_request
from bench.server_bench import (
    CONNECTIONS,
    CREATE_NAMESPACE,
    GET_NAME,
    GET_NAMESPACE,
    LIST_NAMESPACE,
    Bench,
    body_factory,
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
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="profile-server-") as work_dir:
        work = Path(work_dir)
        bench = Bench(work)
        profile = work / "server.prof"
        wrapper = () if options.py_spy else ("-m", "cProfile", "-o", str(profile))
        try:
            bench.start_apiserver(options.storage, wrapper=wrapper)
            bench.seed(options.storage)
            if options.py_spy:
                run_py_spy(bench, options.storage, options.phase, options.seconds, work)
                return
            result = load(bench, options.storage, options.phase, options.seconds)
        finally:
            bench.stop_all()
        print(
            f"{options.phase} on {options.storage} under cProfile: {result.requests:,} requests,"
            f" {result.rate:,.0f} req/s, {result.server_us:,.0f} µs server CPU/req (inflated by profiling)"
        )
        if options.save:
            shutil.copyfile(profile, options.save)
        print_cprofile(profile, result.requests)


if __name__ == "__main__":
    main()
