"""``--profile``: one scenario against a server under cProfile (its event loop thread) or sampled by py-spy
(every thread), and where the time goes."""

from __future__ import annotations

import collections
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import REPO, run_uvloop
from bench.engine.fanout import fan_out_run
from bench.engine.report import quantile
from bench.engine.servers import Engine, gc_wrapper
from bench.engine.settings import CACHE_LIST, CONNECTIONS, CREATE_NS, STORAGE_LIST, collection
from bench.engine.updates import drive_updates
from bench.loadgen import drive, get_request, post_request
from bench.profile_server import print_cprofile
from bench.server_bench import body_factory

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
                drive_updates(server.port, engine.updates[storage], seconds, server.pid)
            )
        print(f"{scenario} on {storage}: {load.requests:,} requests, {load.rate:,.0f}/s")
        return load.requests, "requests"
    fan = fan_out_run(engine, False)
    print(
        f"fan-out on {storage}: {fan.written} writes to {fan.watchers} watchers,"
        f" {fan.delivered:,} deliveries, p99 {quantile(fan.from_send, 0.99) * 1e3:,.0f} ms"
    )
    return fan.delivered, "deliveries"
