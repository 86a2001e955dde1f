"""Events expire --event-ttl after their last report, as kube's etcd lease on every Event write makes them
(kube-apiserver --event-ttl, default 1h): an old one is swept, a fresh one and a recently repeated one stay."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from apiserver.machinery import errors
from apiserver.registry.store import Store
from apiserver.server.app import APIServer
from apiserver.storage.memory import MemoryStorage
from builtin.core.eventttl import EventTTL
from generated.server import OPENAPI_DIR, build_apis


def event(name: str, first: datetime, last: datetime) -> dict[str, object]:
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Test",
        "firstTimestamp": first.strftime(stamp),
        "lastTimestamp": last.strftime(stamp),
    }


async def until_swept(store: Store, name: str) -> None:
    """Polls until the event ``name`` is gone (404), for at most five seconds."""
    for _ in range(500):
        try:
            await store.get("default", name)
        except errors.APIError as error:
            assert error.code == 404
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the event {name} was never swept")


def test_expired_events_are_swept_and_recent_ones_kept() -> None:
    """The TTL runs from the last report (kube: from the last write, which a repeat is)."""

    async def body() -> None:
        server = APIServer(
            build_apis(), MemoryStorage(), OPENAPI_DIR, kind_options={EventTTL: EventTTL(2.0)}
        )
        await server.start()
        store = server.context.store("", "events")
        start = datetime.now(UTC)
        await store.create("default", event("old", start, start))
        await store.create("default", event("repeated", start, start))
        await asyncio.sleep(1.2)

        def repeat(current: dict[str, object]) -> dict[str, object]:
            current["lastTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            return current

        await store.update("default", "repeated", repeat)
        await store.create("default", event("fresh", datetime.now(UTC), datetime.now(UTC)))
        await until_swept(store, "old")
        assert (await store.get("default", "repeated"))["metadata"]["name"] == "repeated"
        assert (await store.get("default", "fresh"))["metadata"]["name"] == "fresh"
        await server.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=15))


def test_events_written_through_events_k8s_io_expire_too() -> None:
    """events.k8s.io/v1 events are core events (one storage): the same sweep removes them."""

    async def body() -> None:
        server = APIServer(
            build_apis(), MemoryStorage(), OPENAPI_DIR, kind_options={EventTTL: EventTTL(1.0)}
        )
        await server.start()
        view = server.context.store("events.k8s.io", "events")
        core = server.context.store("", "events")
        old = datetime.now(UTC) - timedelta(hours=1)
        written = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "via-events"},
            "eventTime": old.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
            "reportingController": "example.com/c",
            "reportingInstance": "c-0",
            "action": "Act",
            "reason": "Test",
            "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
            "note": "old",
            "type": "Normal",
        }
        await view.create("default", written)
        assert (await core.get("default", "via-events"))["message"] == "old"
        await until_swept(core, "via-events")
        await server.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=15))
