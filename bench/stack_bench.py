"""The stack choice, by measurement: framework cost per request and JSON encoder cost per object.

1. HTTP: the hello-JSON endpoint of bench/hello_app.py as raw ASGI and as a Starlette app, both on
   uvicorn + httptools + uvloop (one process each), interleaved rounds driven by bench/loadgen.py.
   Starlette is not an apiforge dependency; this bench needs it installed in the venv
   (``.venv/bin/pip install starlette``) and skips that comparison when it is missing.
2. JSON: encoding one ~1.8 KiB Kubernetes-like CronTab with orjson, the stdlib ``json`` (as
   Starlette's JSONResponse calls it), and pydantic's ``model_dump_json`` on the generated model
   (generated.stable_example_com.v1.models.CronTab); plus decoding it with orjson vs pydantic's
   validating ``model_validate_json``, which is what a write costs at the API edge.

Run from the repository root: ``.venv/bin/python -m bench.stack_bench``.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from bench.common import ChildServer, Row, free_port, median, print_rows, rotated, spread
from bench.loadgen import Load, drive, get_request
from bench.server_bench import crontab

HTTP_ROUNDS = 3
HTTP_SECONDS = 1.0
CONNECTIONS = 32
CODEC_ROUNDS = 7
CODEC_SECONDS = 0.05


def kube_object() -> dict[str, Any]:
    """A CronTab as the server returns it (server metadata, status with conditions): ~1.8 KiB."""
    obj = crontab("nightly-report")
    metadata = obj["metadata"]
    assert isinstance(metadata, dict)
    metadata.update(
        namespace="reporting",
        uid="9f0c7e52-8d4b-4c1e-b2a6-3f1d5e7a9c21",
        resourceVersion="184467",
        generation=4,
        creationTimestamp="2026-01-14T09:30:12Z",
    )
    obj["status"] = {
        "replicas": 3,
        "labelSelector": "app.kubernetes.io/name=nightly-report",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "AllReplicasReady",
                "observedGeneration": 4,
                "lastTransitionTime": "2026-01-14T09:31:40Z",
                "message": "3 of 3 replicas are ready",
            },
        ],
    }
    return obj


# -- HTTP ------------------------------------------------------------------------------------------


def http_rows(work: Path) -> list[Row]:
    variants = ["raw"]
    if importlib.util.find_spec("starlette") is not None:
        variants.append("starlette")
    servers: dict[str, ChildServer] = {}
    try:
        for app in variants:
            port = free_port()
            server = ChildServer(
                app,
                ["-m", "bench.hello_app", "--port", str(port), "--app", app],
                port,
                work / f"{app}.log",
            )
            server.start()
            servers[app] = server
        loads: dict[str, list[Load]] = {app: [] for app in variants}
        for round_number in range(HTTP_ROUNDS):
            for app in rotated(variants, round_number):
                server = servers[app]
                loads[app].append(
                    drive(
                        server.port,
                        get_request("/hello"),
                        connections=CONNECTIONS,
                        seconds=HTTP_SECONDS,
                        server_pid=server.pid,
                    )
                )
    finally:
        for server in servers.values():
            server.stop()
    print(
        f"stack bench, HTTP: hello-JSON on uvicorn+httptools+uvloop, {HTTP_ROUNDS} interleaved rounds"
        f" x {HTTP_SECONDS:g}s, {CONNECTIONS} connections"
    )
    for app, app_loads in loads.items():
        print(
            f"  {app:<10} req/s {spread([x.rate for x in app_loads]):>24}"
            f"   server CPU µs/req {median([x.server_us for x in app_loads]):5.1f}"
            f"   client ceiling {median([x.client_ceiling for x in app_loads]):,.0f}/s"
        )
    rows = [Row("stack", "raw ASGI hello req/s", spread([x.rate for x in loads["raw"]]))]
    if "starlette" not in loads:
        rows.append(Row("stack", "Starlette hello", "skipped: starlette not installed"))
        return rows
    per_round = [s.rate / r.rate for s, r in zip(loads["starlette"], loads["raw"], strict=True)]
    cpu = median([x.server_us for x in loads["starlette"]]) / median(
        [x.server_us for x in loads["raw"]]
    )
    rows.append(Row("stack", "Starlette / raw ASGI (req/s)", spread(per_round, ".2f")))
    rows.append(Row("stack", "Starlette / raw ASGI (CPU/req)", f"{cpu:.2f}x"))
    return rows


# -- JSON ------------------------------------------------------------------------------------------


def _per_op_us(operation: Callable[[], object]) -> float:
    """µs per call of ``operation``, calling it for about CODEC_SECONDS."""
    count, started = 0, time.perf_counter()
    deadline = started + CODEC_SECONDS
    while time.perf_counter() < deadline:
        for _ in range(100):
            operation()
        count += 100
    return (time.perf_counter() - started) / count * 1e6


def codec_rows() -> list[Row]:
    from generated.stable_example_com.v1.models import CronTab

    obj = kube_object()
    model = CronTab.model_validate(obj)
    wire = orjson.dumps(obj)
    dumped = model.model_dump_json(exclude_unset=True)
    assert orjson.loads(dumped) == obj, "the pydantic encoding must say the same as the dict's"

    def stdlib() -> str:  # as Starlette's JSONResponse renders
        return json.dumps(
            obj, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
        )

    encoders: dict[str, Callable[[], object]] = {
        "orjson.dumps(dict)": lambda: orjson.dumps(obj),
        "json.dumps(dict)": stdlib,
        "pydantic model_dump_json": lambda: model.model_dump_json(exclude_unset=True),
    }
    decoders: dict[str, Callable[[], object]] = {
        "orjson.loads": lambda: orjson.loads(wire),
        "pydantic model_validate_json": lambda: CronTab.model_validate_json(wire),
    }
    samples: dict[str, list[float]] = {name: [] for name in (*encoders, *decoders)}
    operations = {**encoders, **decoders}
    for round_number in range(CODEC_ROUNDS):
        for name in rotated(list(operations), round_number):
            samples[name].append(_per_op_us(operations[name]))
    print(
        f"stack bench, JSON: one {len(wire):,} B CronTab, {CODEC_ROUNDS} interleaved rounds;"
        " µs per call, min (median)"
    )
    best = {name: min(values) for name, values in samples.items()}
    size = f"{len(wire) / 1024:.1f} KiB"
    rows = []
    for group, reference in ((encoders, "orjson.dumps(dict)"), (decoders, "orjson.loads")):
        for name in group:
            ratio = best[name] / best[reference]
            print(
                f"  {name:<30} {best[name]:6.2f} ({median(samples[name]):6.2f})   {ratio:5.1f}x {reference}"
            )
            if name != reference:
                rows.append(Row("stack", f"{name} / {reference}", f"{ratio:.1f}x"))
            else:
                rows.append(Row("stack", f"{name} µs per {size} object", f"{best[name]:.1f}"))
    return rows


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="stack-bench-") as work:
        rows = http_rows(Path(work))
    return rows + codec_rows()


def main() -> None:
    rows = run()
    print("summary")
    print_rows(rows)


if __name__ == "__main__":
    main()
