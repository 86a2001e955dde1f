"""bench/etcd_floor_app.py, the reference the etcd write ratios are read against, really does a write's
transport on a real etcd: a guarded txn per create and update, and its watch reads every event."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import aetcd
import httpx
import orjson
import pytest

from bench.common import ChildServer, free_port
from tests.etcdproc import EtcdProcess

PREFIX = "/floor-test/"
COLLECTION = "/apis/stable.example.com/v1/namespaces/ns/crontabs"


@pytest.fixture
def floor(tmp_path: Path, etcd: EtcdProcess) -> Iterator[httpx.Client]:
    port = free_port()
    argv = ["-m", "bench.etcd_floor_app", "--port", str(port), "--etcd", etcd.url]
    server = ChildServer("floor", [*argv, "--prefix", PREFIX], port, tmp_path / "floor.log")
    server.start(timeout=30)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            yield client
    finally:
        server.stop()


def stored(etcd: EtcdProcess, key: str) -> tuple[bytes, int] | None:
    """A key's value and mod revision, read straight from etcd."""

    async def read() -> tuple[bytes, int] | None:
        host, _, port = etcd.url.removeprefix("http://").partition(":")
        async with aetcd.Client(host=host, port=int(port)) as client:
            result = await client.get(key.encode())
            return None if result is None else (result.value, result.mod_revision)

    return asyncio.run(read())


def events_read(floor: httpx.Client, at_least: int) -> int:
    deadline = time.monotonic() + 10
    while (count := int(floor.get("/readyz").json()["events"])) < at_least:
        assert time.monotonic() < deadline, f"its watch read {count} events, expected {at_least}"
        time.sleep(0.02)
    return count


def test_create_is_create_only_and_update_is_a_guarded_put(
    floor: httpx.Client, etcd: EtcdProcess
) -> None:
    body = orjson.dumps({"metadata": {"name": "a"}, "spec": {"n": 1}})
    created = floor.post(COLLECTION, content=body)
    assert created.status_code == 201 and created.content == body
    key = f"{PREFIX}{COLLECTION}/a"
    value, revision = stored(etcd, key) or (b"", 0)
    assert value == body
    assert floor.post(COLLECTION, content=body).status_code == 409  # the key exists: no write
    assert stored(etcd, key) == (body, revision)

    changed = orjson.dumps({"metadata": {"name": "a"}, "spec": {"n": 2}})
    assert floor.put(f"{COLLECTION}/a", content=changed).status_code == 200
    value, after = stored(etcd, key) or (b"", 0)
    assert (value, after > revision) == (changed, True)
    assert events_read(floor, 2) == 2  # the create and the update; the refused create wrote nothing


def test_an_update_behind_another_writer_rereads_and_lands(
    floor: httpx.Client, etcd: EtcdProcess
) -> None:
    """Another client moved the key: the guarded put fails, reads the revision, and lands on retry."""
    floor.post(COLLECTION, content=orjson.dumps({"metadata": {"name": "b"}}))
    key = f"{PREFIX}{COLLECTION}/b"

    async def write_elsewhere() -> None:
        host, _, port = etcd.url.removeprefix("http://").partition(":")
        async with aetcd.Client(host=host, port=int(port)) as client:
            await client.put(key.encode(), b"{}")

    asyncio.run(write_elsewhere())
    changed = orjson.dumps({"metadata": {"name": "b"}, "spec": {"n": 3}})
    assert floor.put(f"{COLLECTION}/b", content=changed).status_code == 200
    assert (stored(etcd, key) or (b"", 0))[0] == changed
    assert floor.put(f"{COLLECTION}/missing", content=changed).status_code == 404
