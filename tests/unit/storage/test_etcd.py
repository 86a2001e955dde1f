"""etcd-only guarantees, against a real etcd this module starts, stops, restarts and ``kill -9``s.

The conformance suite (test_conformance.py) proves the contract; these prove what only a networked
store can get wrong: a watch that outlives an etcd restart without a gap or a duplicate,
acknowledged writes that survive an etcd crash, and the on-disk layout kube tooling expects.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import aetcd
import pytest

from apiserver.storage import (
    CompactedError,
    EtcdStorage,
    EtcdUnavailableError,
    EventType,
    StorageError,
    open_storage,
)
from apiserver.storage.testing import Events
from tests.etcdproc import EtcdProcess, etcdctl_binary, running_etcd
from tests.serverproc import free_port

TIMEOUT = 10.0


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    """This module's own etcd: its tests stop and crash it, which the shared one must not see."""
    yield from running_etcd(tmp_path_factory.mktemp("etcd"))


@pytest.fixture
def running(etcd: EtcdProcess) -> EtcdProcess:
    """The module's etcd, restarted if an earlier (failed) test left it down."""
    if etcd.process is None:
        etcd.restart()
    return etcd


def unique_prefix() -> str:
    return f"/t-{uuid.uuid4().hex}"


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_a_watch_resumes_across_an_etcd_restart_with_no_gap_and_no_duplicate(
    running: EtcdProcess, how: str
) -> None:
    storage = EtcdStorage(running.endpoints, unique_prefix())
    await storage.start()
    try:
        start = await storage.current_revision()
        before = [await storage.create(f"/registry/w/before-{i}", b"{}") for i in range(3)]
        watch = Events(storage.watch("/registry/w/", start), TIMEOUT)
        assert [e.kv for e in await watch.take(3)] == before

        await asyncio.to_thread(running.stop if how == "stop" else running.kill)
        await asyncio.sleep(0.3)  # long enough for the stream to break and re-watching to begin
        await asyncio.to_thread(running.restart)
        after = [await storage.create(f"/registry/w/after-{i}", b"{}") for i in range(3)]
        resumed = await watch.take(3)
        await watch.assert_quiet()
        await watch.watch.close()
    finally:
        await storage.close()
    assert [e.kv for e in resumed] == after
    assert [e.type for e in resumed] == [EventType.PUT] * 3


async def test_acknowledged_writes_survive_kill_9_of_etcd(running: EtcdProcess) -> None:
    """Eight creators stream writes; etcd dies by SIGKILL mid-stream; every create that returned is
    there after the restart."""
    storage = EtcdStorage(running.endpoints, unique_prefix(), request_timeout=5.0)
    await storage.start()
    acknowledged: list[str] = []

    async def creator(worker: int) -> None:
        for i in range(10**9):
            key = f"/registry/durable/{worker}/{i:09d}"
            try:
                await storage.create(key, key.encode())
            except StorageError:
                return
            acknowledged.append(key)

    try:
        creators = [asyncio.create_task(creator(worker)) for worker in range(8)]
        while len(acknowledged) < 300:
            await asyncio.sleep(0.002)
        await asyncio.to_thread(running.kill)
        await asyncio.sleep(0.2)  # in-flight calls fail; a reply that beat the kill still counts
        for task in creators:
            task.cancel()
        await asyncio.gather(*creators, return_exceptions=True)

        await asyncio.to_thread(running.restart)
        stored = {kv.key: kv.value for kv in (await storage.list("/registry/durable/")).items}
    finally:
        await storage.close()
    assert [key for key in acknowledged if stored.get(key) != key.encode()] == []
    assert len(stored) >= len(acknowledged)


async def test_values_are_the_objects_json_under_the_etcd_prefix(running: EtcdProcess) -> None:
    """``etcdctl get --prefix /registry/`` shows readable objects; ``prefix`` moves the keys."""
    obj = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "x", "namespace": "default"},
        "spec": {"cronSpec": "* * * * */5"},
    }
    key = "/registry/stable.example.com/crontabs/default/x"
    tenant = unique_prefix()
    default_store = EtcdStorage(running.endpoints)
    tenant_store = EtcdStorage(running.endpoints, prefix=tenant)
    await default_store.start()
    await tenant_store.start()
    try:
        await default_store.create(key, json.dumps(obj).encode())
        await tenant_store.create(key, b'{"tenant": true}')
        raw = await read_prefix(running, "/registry/")
        moved = await read_prefix(running, tenant + "/")
        assert (await tenant_store.get(key)) is not None
        assert [kv.key for kv in (await tenant_store.list("/registry/")).items] == [key]
    finally:
        await default_store.delete(key)
        await default_store.close()
        await tenant_store.close()
    assert raw == {key: obj}
    assert moved == {f"{tenant}/stable.example.com/crontabs/default/x": {"tenant": True}}


async def read_prefix(etcd: EtcdProcess, prefix: str) -> dict[str, object]:
    """Keys and JSON-decoded values under ``prefix``, as an operator would see them: through
    etcdctl when installed, else through a plain aetcd client."""
    etcdctl = etcdctl_binary()
    if etcdctl is not None:
        done = await asyncio.to_thread(
            subprocess.run,
            [etcdctl, f"--endpoints={etcd.url}", "get", "--prefix", prefix],
            env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        )
        lines = done.stdout.splitlines()
        return {k: json.loads(v) for k, v in zip(lines[::2], lines[1::2], strict=True)}
    async with aetcd.Client(host="127.0.0.1", port=etcd.client_port) as client:
        found = await client.get_prefix(prefix.encode())
        return {kv.key.decode(): json.loads(kv.value) for kv in found}


@pytest.mark.parametrize("notify", [True, False], ids=["progress-notify", "no-progress-notify"])
async def test_progress_notifications_carry_a_quiet_watch_past_compaction(
    tmp_path: Path, notify: bool
) -> None:
    """A watch on a quiet prefix re-watches after an etcd restart from the last revision it knows.
    With etcd's timed progress notifications that is near the head, so a compaction of the busy
    rest of the keyspace does not cost its consumer a relist; without them it must relist."""
    interval = "100ms" if notify else "10m"
    server = EtcdProcess(
        tmp_path / "data", extra_args=[f"--experimental-watch-progress-notify-interval={interval}"]
    )
    await asyncio.to_thread(server.start)
    storage = EtcdStorage(server.endpoints)
    await storage.start()
    try:
        watch = storage.watch("/registry/quiet/", await storage.current_revision())
        first = asyncio.ensure_future(anext(aiter(watch)))
        for i in range(20):
            await storage.create(f"/registry/busy/{i}", b"{}")
        await asyncio.sleep(0.5)  # several notification intervals
        await storage.compact(await storage.current_revision())
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.restart)
        created = await storage.create("/registry/quiet/a", b"{}")
        if notify:
            assert (await asyncio.wait_for(first, TIMEOUT)).kv == created
        else:
            with pytest.raises(CompactedError):
                await asyncio.wait_for(first, TIMEOUT)
        await watch.close()
    finally:
        await storage.close()
        await asyncio.to_thread(server.stop)


async def test_stores_sharing_one_etcd_see_each_others_writes(running: EtcdProcess) -> None:
    """Several API servers may share a cluster; each one's watch sees every server's writes."""
    prefix = unique_prefix()
    one, two = EtcdStorage(running.endpoints, prefix), EtcdStorage(running.endpoints, prefix)
    await one.start()
    await two.start()
    try:
        watch = Events(two.watch("/registry/shared/", await two.current_revision()), TIMEOUT)
        created = await one.create("/registry/shared/a", b"{}")
        updated = await two.update("/registry/shared/a", b'{"v": 2}', created.mod_revision)
        deleted = await one.delete("/registry/shared/a", updated.mod_revision)
        events = await watch.take(3)
        await watch.watch.close()
    finally:
        await one.close()
        await two.close()
    assert [(e.type, e.kv, e.prev) for e in events] == [
        (EventType.PUT, created, None),
        (EventType.PUT, updated, created),
        (EventType.DELETE, deleted, updated),
    ]


async def test_a_list_larger_than_grpcs_default_receive_limit_works(running: EtcdProcess) -> None:
    storage = EtcdStorage(running.endpoints, unique_prefix())
    await storage.start()
    value = b'{"data": "' + b"x" * 100_000 + b'"}'
    try:
        await asyncio.gather(*(storage.create(f"/registry/big/{i:02d}", value) for i in range(48)))
        result = await storage.list(
            "/registry/big/"
        )  # ~4.8 MB in one response (gRPC default: 4 MiB)
    finally:
        await storage.close()
    assert len(result.items) == 48
    assert all(kv.value == value for kv in result.items)


async def test_an_unreachable_etcd_fails_within_the_request_timeout() -> None:
    storage = EtcdStorage([f"http://127.0.0.1:{free_port()}"], request_timeout=0.3)
    with pytest.raises(EtcdUnavailableError, match="no connection to any member") as raised:
        await asyncio.wait_for(storage.start(), TIMEOUT)
    await storage.close()
    assert "127.0.0.1" not in str(raised.value)  # the message reaches API clients: no addresses


async def test_a_write_during_an_etcd_restart_waits_for_it(running: EtcdProcess) -> None:
    """Calls wait for the connection (up to the request timeout) instead of failing at once."""
    storage = EtcdStorage(running.endpoints, unique_prefix())
    await storage.start()
    try:
        await asyncio.to_thread(running.stop)
        write = asyncio.ensure_future(storage.create("/registry/late/a", b"{}"))
        await asyncio.sleep(0.2)
        assert not write.done()
        await asyncio.to_thread(running.restart)
        created = await asyncio.wait_for(write, TIMEOUT)
        assert await storage.get("/registry/late/a") == created
    finally:
        await storage.close()


def test_keys_outside_registry_and_bad_endpoints_are_refused() -> None:
    storage = open_storage("etcd", None, etcd_servers=["http://127.0.0.1:2379"], etcd_prefix="/x")
    assert isinstance(storage, EtcdStorage)
    with pytest.raises(ValueError, match="start with '/registry'"):
        asyncio.run(storage.get("/elsewhere/a"))
    with pytest.raises(ValueError, match="--etcd-servers"):
        open_storage("etcd", None)
    with pytest.raises(ValueError, match="only http://"):
        EtcdStorage(["https://127.0.0.1:2379"])
