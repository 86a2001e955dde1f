"""What the metrics cost a request: the server's CPU per GET and per create, in-process, through the filter
chain as ``apiforge serve`` builds it, with and without the metrics filter (apiserver_request_total, the
duration histogram, in-flight counts) and the storage timing (etcd_request_duration_seconds).

A GET of one CronTab is answered from the watch cache (no storage call: the filter's cost alone); a create
writes to memory storage (the filter's and the storage timing's cost). Interleaved rounds; reported per
variant: µs of CPU per request (median of rounds) and the ratio with/without metrics.

Run from the repository root: ``.venv/bin/python -m bench.metrics_bench``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable
from itertools import count

import orjson

from apiserver.endpoints.http import ASGIApp, Message
from apiserver.filters.metrics import MetricsFilter
from apiserver.filters.pipeline import Pipeline
from apiserver.metrics.storage import InstrumentedStorage
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.options import ChainOptions
from apiserver.storage import MemoryStorage
from bench.chain_bench import KUBECTL_HEADERS, PATH, as_served, receive, scope_of, seed
from bench.common import Row, interleaved, median, print_rows, spread
from bench.server_bench import crontab
from generated.server import OPENAPI_DIR, build_apis

ROUNDS = 7
REQUESTS = 2_000
COLLECTION = PATH.rsplit("/", 1)[0]


def without_metrics(server: APIServer) -> ASGIApp:
    """The same chain with the metrics filter taken out and the storage untimed: what a request cost
    before /metrics existed."""
    pipeline = build_handler_chain(server, ChainOptions())
    steps = [step for step in pipeline.steps if not isinstance(step, MetricsFilter)]
    assert len(steps) == len(pipeline.steps) - 1
    return Pipeline(steps, pipeline.handler)


async def cpu_per_get(app: ASGIApp) -> float:
    async def ok(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"GET answered {message['status']}")

    gc.collect()
    started = time.process_time()
    for _ in range(REQUESTS):
        await app(scope_of(list(KUBECTL_HEADERS)), receive, ok)
    return (time.process_time() - started) / REQUESTS * 1e6


async def cpu_per_create(app: ASGIApp, names: count[int], label: str) -> float:
    async def created(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] != 201:
            raise RuntimeError(f"create answered {message['status']}")

    bodies = [orjson.dumps(crontab(f"{label}-{next(names)}")) for _ in range(REQUESTS // 4)]
    gc.collect()
    started = time.process_time()
    for body in bodies:
        scope = scope_of([(b"content-type", b"application/json")])
        scope.update(method="POST", path=COLLECTION, raw_path=COLLECTION.encode())

        async def receive_body(body: bytes = body) -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, receive_body, created)
    return (time.process_time() - started) / len(bodies) * 1e6


async def measure() -> dict[str, list[float]]:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    try:
        await seed(server)
        measured = build_handler_chain(server, ChainOptions())
        bare = without_metrics(server)
        assert isinstance(server.storage, InstrumentedStorage)
        timed, untimed = server.storage, server.storage.storage
        names = count()

        def create(app: ASGIApp, timing: bool, label: str) -> Callable[[], Awaitable[float]]:
            async def run() -> float:
                for store in server.stores.values():  # the storage every write goes to
                    store.storage = timed if timing else untimed
                try:
                    return await cpu_per_create(app, names, label)
                finally:
                    for store in server.stores.values():
                        store.storage = timed

            return run

        variants: dict[str, Callable[[], Awaitable[float]]] = {
            "GET without metrics": lambda: cpu_per_get(bare),
            "GET with metrics": lambda: cpu_per_get(measured),
            "create without metrics": create(bare, False, "bare"),
            "create with metrics": create(measured, True, "measured"),
        }
        return await interleaved(variants, ROUNDS)
    finally:
        await server.stop()


def run() -> list[Row]:
    samples = as_served(measure())
    rows = [
        Row("metrics", f"{name}: CPU µs per request", spread(values, ",.1f"))
        for name, values in samples.items()
    ]
    for verb in ("GET", "create"):
        ratio = median(samples[f"{verb} with metrics"]) / median(samples[f"{verb} without metrics"])
        rows.append(Row("metrics", f"{verb}: with/without metrics", f"{ratio:.3f}"))
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
