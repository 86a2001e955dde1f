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
import tempfile
from pathlib import Path

from bench.common import Row, print_rows
from bench.engine.fanout import fan_runs
from bench.engine.lists import list_phases
from bench.engine.profiling import SCENARIOS, profile
from bench.engine.report import Results, report
from bench.engine.sample import interleave
from bench.engine.servers import Engine, gc_wrapper
from bench.engine.settings import FAN_ROUNDS, FANOUT, LISTS, PHASES, ROUNDS, STORAGES, WRITES
from bench.engine.sweeps import IN_FLIGHT_SWEEP, SWEEP, fan_sweep, write_sweep
from bench.engine.writes import write_phases
from bench.watch_fanout import FanResult, open_fds, rss_bytes


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
            lists = interleave(list_phases(engine), rounds) if LISTS in only else {}
            writes = interleave(write_phases(engine), rounds) if WRITES in only else {}
            engine.stop_etcd_side()  # the fan-out runs on SQLite; etcd would only add noise
            fans: dict[bool, list[FanResult]] = {}
            if FANOUT in only:
                fans = fan_runs(engine, fan_rounds)
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


def phase_names(text: str) -> frozenset[str]:
    """One ``--only`` value: phase names, comma-separated."""
    chosen = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = chosen - PHASES
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"expected {', '.join(sorted(PHASES))} (comma-separated), got {text!r}"
        )
    return chosen


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
