"""What EtcdStorage costs over the etcd client it wraps, side by side in one run against one etcd.

Phases, each sequential (one caller awaiting one op at a time) and with 32 callers in flight:

- raw aetcd: ``put`` of new keys, a create ``transaction`` (create_revision == 0 → put: what a
  create that must not overwrite costs), ``get`` of existing keys, and a CAS ``transaction``
  (compare the key's mod_revision, put on success, get on failure: kube's GuaranteedUpdate
  pattern);
- EtcdStorage: ``create`` (txn create_revision == 0 → put), ``get``, and ``update`` (txn
  mod_revision == expected → put + keys-only read, else read), the storage calls that map onto them.

Each phase runs for a bounded time; phases are interleaved and rotated over a few rounds and the
median is shown, with EtcdStorage's rate as a ratio of the raw op's. Also shown: this process's CPU
per op (client side, gRPC threads included), which is the wrapper's real cost and the figure load
on a shared machine disturbs least. Values are ~1 KiB, like a small Pod.

Starts a throwaway etcd (tests/etcdproc.py; needs the ``etcd`` binary, Debian's etcd-server), or
uses ``--endpoint URL``. Run from the repository root: ``.venv/bin/python -m bench.etcd_bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aetcd

from apiserver.storage import EtcdStorage
from bench.common import Row, median, rotated
from tests.etcdproc import EtcdProcess

ROUNDS = 3
SECONDS_PER_PHASE = 0.6
CONCURRENCY = 32
VALUE = (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bench"},"spec":' + b"0" * 960) + b"}"

Op = Callable[[int, int], Awaitable[None]]
"""One operation by caller ``worker``, its ``n``-th."""


@dataclass
class Sample:
    rate: float  # ops/s
    cpu_us: float  # this process's CPU per op, µs


Samples = dict[tuple[str, int], list[Sample]]
"""Per (phase, callers in flight): one sample per round."""


@dataclass(frozen=True)
class Pair:
    """A raw aetcd op and the EtcdStorage call built on it."""

    name: str
    raw: str
    storage: str


PAIRS = [
    Pair("write new key", "aetcd put", "EtcdStorage.create"),
    # create must not overwrite, so it is a txn: this pair isolates what the wrapper itself costs
    Pair("create (txn)", "aetcd create txn", "EtcdStorage.create"),
    Pair("read one key", "aetcd get", "EtcdStorage.get"),
    Pair("compare-and-swap", "aetcd CAS txn", "EtcdStorage.update"),
]


class Phases:
    """Every phase's op, with the keys each needs prepared in advance."""

    def __init__(self, client: aetcd.Client, storage: EtcdStorage) -> None:
        self.client = client
        self.storage = storage
        self.phase = ""  # names the keys each create/put phase writes, so none exists already
        self.revisions: dict[str, int] = {}  # the CAS phases' per-worker key → mod_revision

    async def prepare(self) -> None:
        """One key per worker for the reads and CAS phases (raw and storage use separate keys)."""
        for worker in range(CONCURRENCY):
            for kind in ("raw", "storage"):
                key = f"/registry/bench/read/{kind}/{worker}"
                kv = await self.storage.get(key)
                if kv is None:
                    kv = await self.storage.create(key, VALUE)
                self.revisions[f"{kind}/{worker}"] = kv.mod_revision

    def ops(self) -> dict[str, Op]:
        return {
            "aetcd put": self.raw_put,
            "aetcd get": self.raw_get,
            "aetcd create txn": self.raw_create,
            "aetcd CAS txn": self.raw_cas,
            "EtcdStorage.create": self.storage_create,
            "EtcdStorage.get": self.storage_get,
            "EtcdStorage.update": self.storage_update,
        }

    async def raw_put(self, worker: int, n: int) -> None:
        await self.client.put(f"/registry/bench/put/{self.phase}/{worker}/{n}".encode(), VALUE)

    async def raw_create(self, worker: int, n: int) -> None:
        key = f"/registry/bench/txn/{self.phase}/{worker}/{n}".encode()
        tx = self.client.transactions
        succeeded, _ = await self.client.transaction(
            compare=[tx.create(key) == 0], success=[tx.put(key, VALUE)], failure=[]
        )
        if not succeeded:
            raise RuntimeError("a create in the bench found its key taken")

    async def raw_get(self, worker: int, n: int) -> None:
        await self.client.get(f"/registry/bench/read/raw/{worker}".encode())

    async def raw_cas(self, worker: int, n: int) -> None:
        slot = f"raw/{worker}"
        key = f"/registry/bench/read/{slot}".encode()
        tx = self.client.transactions
        succeeded, responses = await self.client.transaction(
            compare=[tx.mod(key) == self.revisions[slot]],
            success=[tx.put(key, VALUE)],
            failure=[tx.get(key)],
        )
        if not succeeded:
            raise RuntimeError("a CAS in the bench lost a race it cannot have")
        self.revisions[slot] = responses[0].response_put.header.revision

    async def storage_create(self, worker: int, n: int) -> None:
        await self.storage.create(f"/registry/bench/create/{self.phase}/{worker}/{n}", VALUE)

    async def storage_get(self, worker: int, n: int) -> None:
        await self.storage.get(f"/registry/bench/read/storage/{worker}")

    async def storage_update(self, worker: int, n: int) -> None:
        slot = f"storage/{worker}"
        kv = await self.storage.update(f"/registry/bench/read/{slot}", VALUE, self.revisions[slot])
        self.revisions[slot] = kv.mod_revision


async def measure_phase(op: Op, concurrency: int, seconds: float = SECONDS_PER_PHASE) -> Sample:
    """Ops/s and CPU/op with ``concurrency`` callers, each awaiting one op at a time."""
    count = 0

    async def caller(worker: int, deadline: float) -> None:
        nonlocal count
        for n in itertools.count():
            if time.perf_counter() >= deadline:
                return
            await op(worker, n)
            count += 1

    cpu, start = time.process_time(), time.perf_counter()
    await asyncio.gather(*(caller(w, start + seconds) for w in range(concurrency)))
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    return Sample(count / elapsed, used / max(count, 1) * 1e6)


async def measure(endpoint: str) -> Samples:
    parts = urlsplit(endpoint)
    storage = EtcdStorage([endpoint])
    await storage.start()
    client = aetcd.Client(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 2379,
        options={"grpc.max_receive_message_length": 2**31 - 1},
    )
    try:
        await client.connect()
        phases = Phases(client, storage)
        await phases.prepare()
        ops = phases.ops()
        phase_list = [(name, c) for name in ops for c in (1, CONCURRENCY)]
        samples: Samples = {phase: [] for phase in phase_list}
        for round_number in range(ROUNDS):
            for index in rotated([str(i) for i in range(len(phase_list))], round_number):
                name, concurrency = phase_list[int(index)]
                phases.phase = f"{round_number}-{concurrency}"
                samples[name, concurrency].append(await measure_phase(ops[name], concurrency))
        return samples
    finally:
        await client.close()
        await storage.close()


def report(samples: Samples) -> list[Row]:
    def rate(name: str, concurrency: int) -> float:
        return median([s.rate for s in samples[name, concurrency]])

    def cpu(name: str, concurrency: int) -> float:
        return median([s.cpu_us for s in samples[name, concurrency]])

    print(
        f"ops/s and client CPU µs/op, median of {ROUNDS} rounds x {SECONDS_PER_PHASE}s;"
        " ratio = EtcdStorage / raw aetcd"
    )
    header = f"  {'':<18} {'in flight':>9}  {'raw op':<16} {'ops/s':>7} {'µs/op':>6}"
    print(f"{header}  {'EtcdStorage':<19} {'ops/s':>7} {'µs/op':>6}  {'ratio':>5}")
    rows = []
    for pair in PAIRS:
        for concurrency in (1, CONCURRENCY):
            raw, ours = rate(pair.raw, concurrency), rate(pair.storage, concurrency)
            print(
                f"  {pair.name:<18} {concurrency:>9}  {pair.raw:<16} {raw:>7,.0f}"
                f" {cpu(pair.raw, concurrency):>6,.0f}  {pair.storage:<19} {ours:>7,.0f}"
                f" {cpu(pair.storage, concurrency):>6,.0f}  {ours / raw:>4.2f}x"
            )
            rows.append(
                Row(
                    "etcd",
                    f"{pair.storage} vs {pair.raw}, {concurrency} in flight",
                    f"{ours:,.0f}/s {ours / raw:.2f}x raw",
                )
            )
    return rows


def run(endpoint: str | None = None) -> list[Row]:
    """Measure, print the table, and return the summary rows of `python -m bench`."""
    if endpoint is not None:
        return report(_run_loop(measure(endpoint)))
    with tempfile.TemporaryDirectory(prefix="etcd-bench-") as work:
        etcd = EtcdProcess(Path(work) / "data")
        etcd.start()
        try:
            return report(_run_loop(measure(etcd.url)))
        finally:
            etcd.stop()


def _run_loop(main: Coroutine[Any, Any, Samples]) -> Samples:
    """On uvloop when available, the loop `apiforge serve` runs on."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.etcd_bench", description=__doc__)
    parser.add_argument("--endpoint", help="an etcd client URL to use instead of a throwaway etcd")
    run(parser.parse_args().endpoint)


if __name__ == "__main__":
    main()
