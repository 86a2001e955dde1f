"""``--fan-sweep`` and ``--write-sweep``: one phase at several loads, to see where a target breaks."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.common import median
from bench.engine.fanout import fan_out_run
from bench.engine.report import cpu_per_op, quantile, ratios
from bench.engine.sample import Phase, Sample, interleave
from bench.engine.servers import Engine, gc_wrapper
from bench.engine.settings import (
    CREATE,
    FAN_RATE,
    FAN_WRITES,
    FLOOR,
    RAW_CAS,
    ROUNDS,
    UPDATE,
    WRITE_SECONDS,
)
from bench.engine.writes import create_phase, raw_etcd_phase, update_phase

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
                fan = fan_out_run(engine, False, watchers)
                print(
                    f"  {watchers:>8,} {f'{fan.written}/{fan.writes}':>8} {fan.write_rate:>9.1f}"
                    f" {quantile(fan.from_send, 0.5) * 1e3:>7.1f}"
                    f" {quantile(fan.from_send, 0.99) * 1e3:>7.1f}"
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
                phases[level, RAW_CAS] = partial(raw_etcd_phase, engine, raw_cas, in_flight)
                for name in ("etcd", FLOOR):
                    phases[level, f"{name} {CREATE}"] = partial(
                        create_phase, engine, name, in_flight
                    )
                    phases[level, f"{name} {UPDATE}"] = partial(
                        update_phase, engine, name, in_flight
                    )
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
            median(ratios(samples, (level, f"{name} {phase}"), raw))
            for name in ("etcd", FLOOR)
            for phase in (CREATE, UPDATE)
        ]
        print(
            f"  {in_flight:>9} {median([s.rate for s in samples[raw]]):>10,.0f}"
            f" {factors[0]:>20.2f} {factors[1]:>13.2f} {factors[2]:>19.2f} {factors[3]:>13.2f}"
            f" {cpu_per_op(samples[level, f'etcd {CREATE}'], 'server_us'):>17}"
        )
