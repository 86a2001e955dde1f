"""What a request to a kind posted at run time costs against the same kind generated (within 10%).

The shipped CronTab (stable.example.com, generated from definitions/) and a CustomResourceDefinition with the
same names, schemas, subresources and printer columns under another group (posted to the same server and
served by the CRD controller) are asked the same things through the bare APIServer, in process: a GET of one
object, a LIST of 100 and a create. Interleaved rounds; reported: µs of CPU per request for each kind and
the run-time kind's ratio to the generated one.

Run from the repository root: ``.venv/bin/python -m bench.crd_bench``.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from apiserver.endpoints.http import Message
from apiserver.server.app import APIServer
from apiserver.storage import MemoryStorage
from bench.chain_bench import as_served, scope_of
from bench.common import Row, interleaved, median, print_rows, spread
from bench.server_bench import crontab
from generated.server import OPENAPI_DIR, build_apis
from generated.stable_example_com import rest

ROUNDS = 7
REQUESTS = {"GET": 3_000, "LIST": 200, "CREATE": 500}
NEW = "bench-new"  # the namespace of the created objects, so that the LIST stays at OBJECTS
GENERATED = "stable.example.com"
RUNTIME = "stable.runtime.example"
OBJECTS = 100


def crontab_crd() -> dict[str, Any]:
    """The generated CronTab's own definition as a CRD of the run-time group."""
    resource = rest.CRON_TAB
    versions = []
    for version in resource.versions:
        entry: dict[str, Any] = {
            "name": version.name,
            "served": version.served,
            "storage": version.storage,
            "schema": {"openAPIV3Schema": version.schema},
            "additionalPrinterColumns": [
                {
                    "name": c.name,
                    "type": c.type,
                    "jsonPath": c.json_path,
                    "priority": c.priority,
                    **({"description": c.description} if c.description else {}),
                }
                for c in version.printer_columns
            ],
            "subresources": {"status": {}} if version.status_subresource else {},
        }
        if version.scale is not None:
            entry["subresources"]["scale"] = {
                "specReplicasPath": version.scale.spec_replicas_path,
                "statusReplicasPath": version.scale.status_replicas_path,
                "labelSelectorPath": version.scale.label_selector_path,
            }
        versions.append(entry)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{resource.plural}.{RUNTIME}"},
        "spec": {
            "group": RUNTIME,
            "scope": "Namespaced",
            "names": {
                "plural": resource.plural,
                "kind": resource.kind,
                "shortNames": list(resource.short_names),
                "categories": list(resource.categories),
            },
            "versions": versions,
        },
    }


def collection(group: str, namespace: str = "default") -> str:
    return f"/apis/{group}/v1/namespaces/{namespace}/crontabs"


async def call(server: APIServer, method: str, path: str, body: bytes = b"") -> int:
    scope = scope_of([(b"accept", b"application/json"), (b"content-type", b"application/json")])
    path, _, query = path.partition("?")
    scope.update(method=method, path=path, raw_path=path.encode(), query_string=query.encode())
    status = 0

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await server(scope, receive, send)
    return status


async def cpu_per_request(
    server: APIServer,
    method: str,
    path: Callable[[int], str],
    body: Callable[[int], bytes],
    requests: int,
) -> float:
    gc.collect()
    started = time.process_time()
    for n in range(requests):
        status = await call(server, method, path(n), body(n))
        if status >= 300:
            raise RuntimeError(f"{method} {path(n)} answered {status}")
    return (time.process_time() - started) / requests * 1e6


async def installed() -> APIServer:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    crds = server.context.store("apiextensions.k8s.io", "customresourcedefinitions")
    await crds.create(None, crontab_crd())
    await server.context.store("", "namespaces").create(None, {"metadata": {"name": NEW}})
    deadline = time.monotonic() + 10
    while await call(server, "GET", collection(RUNTIME)) != 200:
        if time.monotonic() > deadline:
            raise RuntimeError("the CRD was not served")
        await asyncio.sleep(0.01)
    for group in (GENERATED, RUNTIME):
        for n in range(OBJECTS):
            body = {**crontab(f"bench-{n}"), "apiVersion": f"{group}/v1"}
            assert await call(server, "POST", collection(group), orjson.dumps(body)) == 201
    return server


def variants_of(
    server: APIServer, group: str, label: str
) -> dict[str, Callable[[], Awaitable[float]]]:
    """The requests measured on one kind: GET, LIST, and a create of a new object each time."""
    created = 0

    def new_object(_: int) -> bytes:
        nonlocal created
        created += 1
        return orjson.dumps({**crontab(f"new-{created}"), "apiVersion": f"{group}/v1"})

    def nothing(_: int) -> bytes:
        return b""

    def one(_: int) -> str:
        return f"{collection(group)}/bench-1"

    def every(_: int) -> str:
        return collection(group)

    def elsewhere(_: int) -> str:
        return collection(group, NEW)

    return {
        f"GET {label}": lambda: cpu_per_request(server, "GET", one, nothing, REQUESTS["GET"]),
        f"LIST {OBJECTS} {label}": lambda: cpu_per_request(
            server, "GET", every, nothing, REQUESTS["LIST"]
        ),
        f"CREATE {label}": lambda: cpu_per_request(
            server, "POST", elsewhere, new_object, REQUESTS["CREATE"]
        ),
    }


async def measure() -> dict[str, list[float]]:
    server = await installed()
    try:
        variants = {
            **variants_of(server, GENERATED, "generated"),
            **variants_of(server, RUNTIME, "run-time"),
        }
        return await interleaved(variants, ROUNDS)
    finally:
        await server.stop()


def run() -> list[Row]:
    samples = as_served(measure())
    rows = [
        Row("crd", f"{name}: CPU µs", spread(values, ",.1f")) for name, values in samples.items()
    ]
    for request in ("GET", f"LIST {OBJECTS}", "CREATE"):
        ratios = [
            run_time / generated
            for run_time, generated in zip(
                samples[f"{request} run-time"], samples[f"{request} generated"], strict=True
            )
        ]
        rows.append(
            Row(
                "crd",
                f"{request}: run-time / generated CPU",
                f"{median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})",
                "≤ 1.10x",
                median(ratios) <= 1.10,
            )
        )
    print_rows(rows)
    return rows


if __name__ == "__main__":
    run()
