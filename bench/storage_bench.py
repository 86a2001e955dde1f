"""What the SQLite backend's group commit buys, measured side by side in one run.

Three write paths with the same durability (WAL, synchronous=FULL, every acknowledged write on
disk): plain sqlite3 doing one compare-and-insert per commit, and SQLiteStorage.create awaited one
at a time and with 32 creators in flight. Phases are interleaved over a few rounds and the median is
shown, because the machines this runs on are noisy and only the same-run ratios hold.

Run from the repository root: ``.venv/bin/python -m bench.storage_bench``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from apiserver.storage import SQLiteStorage
from bench.common import Row

ROUNDS = 3
SECONDS_PER_PHASE = 0.5
CONCURRENCY = 32
VALUE = (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bench"},"spec":' + b"0" * 960) + b"}"
"""About 1 KiB, like a small Pod."""

RAW_SCHEMA = """
CREATE TABLE log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created INTEGER NOT NULL,
    deleted INTEGER NOT NULL, create_revision INTEGER NOT NULL, prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE INDEX log_name_id ON log (name, id);
"""


def raw_sqlite_rate(
    data_dir: Path, seconds: float = SECONDS_PER_PHASE, value: bytes = VALUE
) -> float:
    """Creates/s with one transaction per create: read the name's latest row, insert, fsync."""
    db = sqlite3.connect(data_dir / "raw.db", isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.executescript(RAW_SCHEMA)
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            name = f"/registry/pods/bench/p{count}"
            db.execute("BEGIN IMMEDIATE")
            latest = db.execute(
                "SELECT id, deleted FROM log WHERE name = ? ORDER BY id DESC LIMIT 1", (name,)
            ).fetchone()
            if latest is None or latest[1]:
                db.execute(
                    "INSERT INTO log (name, created, deleted, create_revision, prev_revision,"
                    " value) VALUES (?, 1, 0, 0, 0, ?)",
                    (name, value),
                )
            db.execute("COMMIT")
            count += 1
        return count / elapsed
    finally:
        db.close()


async def storage_rate(data_dir: Path, concurrency: int) -> float:
    """Creates/s through SQLiteStorage, ``concurrency`` creators each awaiting one at a time."""
    storage = SQLiteStorage(data_dir / "state.db")
    await storage.start()
    count = 0

    async def creator(worker: int, deadline: float) -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            await storage.create(f"/registry/pods/bench/w{worker}-{count}", VALUE)
            count += 1

    try:
        start = time.perf_counter()
        deadline = start + SECONDS_PER_PHASE
        await asyncio.gather(*(creator(worker, deadline) for worker in range(concurrency)))
        return count / (time.perf_counter() - start)
    finally:
        await storage.close()


def in_fresh_dir(measure: Callable[[Path], float]) -> float:
    with tempfile.TemporaryDirectory(prefix="storage-bench-") as data_dir:
        return measure(Path(data_dir))


PHASES: dict[str, Callable[[Path], float]] = {
    "raw sqlite3 compare-and-insert, 1 row/commit": raw_sqlite_rate,
    "SQLiteStorage.create, sequential": lambda d: asyncio.run(storage_rate(d, 1)),
    f"SQLiteStorage.create, {CONCURRENCY} concurrent": lambda d: asyncio.run(
        storage_rate(d, CONCURRENCY)
    ),
}


def measure() -> dict[str, list[float]]:
    """Creates/s of every phase, one sample per round, phases rotated between rounds."""
    samples: dict[str, list[float]] = {name: [] for name in PHASES}
    for round_number in range(ROUNDS):
        names = list(PHASES)
        for name in names[round_number:] + names[:round_number]:  # rotate the order between rounds
            samples[name].append(in_fresh_dir(PHASES[name]))
    return samples


def run() -> list[Row]:
    """Measure, print the table, and return the summary rows of `python -m bench`."""
    samples = measure()
    baseline = statistics.median(next(iter(samples.values())))
    print(f"creates/s, median of {ROUNDS} rounds x {SECONDS_PER_PHASE}s (WAL, synchronous=FULL)")
    rows = []
    for name, rates in samples.items():
        median = statistics.median(rates)
        spread = f"({min(rates):,.0f}-{max(rates):,.0f})"
        print(f"  {name:<46} {median:>9,.0f}/s {spread:<17} {median / baseline:5.2f}x raw")
        rows.append(Row("storage", name, f"{median:,.0f}/s {median / baseline:.2f}x raw"))
    return rows


def main() -> None:
    run()


if __name__ == "__main__":
    main()
