"""What reading stored objects costs: decoding 1,000 stored CronTabs (a LIST of 1,000 rendered from storage).

Three ways, interleaved over rounds, best round kept (the figure noise disturbs least on a shared machine):
``orjson.loads`` alone (the floor), ``codec.decode`` with its prune to the current schema (what every read
paid), and ``Codec.decode`` of the values the same codec wrote (the prune skipped for bytes it wrote clean).

Run from the repository root: ``.venv/bin/python -m bench.codec_bench``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import orjson

from apiserver.registry import codec
from apiserver.storage.interface import KeyValue
from bench.common import Row
from bench.server_bench import crontab
from generated.server import build_scheme

OBJECTS = 1_000
ROUNDS = 15


def _stored() -> tuple[codec.Codec, list[KeyValue]]:
    resource = build_scheme().resource("stable.example.com", "crontabs")
    assert resource is not None
    shape = codec.Codec(resource)
    values = []
    for i in range(OBJECTS):
        obj = crontab(f"c{i}")
        obj["metadata"].update(namespace="default", uid=f"u{i}", generation=1)
        obj["metadata"]["creationTimestamp"] = "2026-12-02T00:00:00Z"
        key = f"/registry/stable.example.com/crontabs/default/c{i}"
        values.append(KeyValue(key, shape.encode(key, obj), i + 1, i + 1))
    return shape, values


def measure() -> dict[str, float]:
    """µs per object of each way, the best of ROUNDS interleaved rounds."""
    shape, values = _stored()
    ways: dict[str, Callable[[KeyValue], object]] = {
        "orjson.loads (floor)": lambda kv: orjson.loads(kv.value),
        "decode, pruned on every read": lambda kv: codec.decode(shape.resource, kv),
        "decode of bytes written clean": shape.decode,
    }
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(ROUNDS):
        for name, way in ways.items():
            started = time.perf_counter()
            for kv in values:
                way(kv)
            best[name] = min(best[name], (time.perf_counter() - started) / OBJECTS * 1e6)
    return best


def run() -> list[Row]:
    best = measure()
    floor = best["orjson.loads (floor)"]
    print(f"decoding {OBJECTS:,} stored CronTabs, µs per object (best of {ROUNDS} rounds)")
    for name, us in best.items():
        print(f"  {name:<32} {us:7.1f} µs  {us / floor:5.2f}x the floor")
    return [Row("codec", name, f"{us:.1f} µs/object") for name, us in best.items()]


def main() -> None:
    run()


if __name__ == "__main__":
    main()
