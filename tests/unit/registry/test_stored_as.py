"""A resource stored as another's (``ResourceType.stored_as``, kube's storage resource): events.k8s.io/v1
events are core events, stored once under /registry/events, each resource converting to and from the one
stored form. What one writes the other reads, lists and watches."""

from __future__ import annotations

import asyncio
from typing import Any

from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.keys import object_key
from apiserver.registry.store import ListOptions, Store
from apiserver.registry.versioning import to_version
from apiserver.storage.memory import MemoryStorage
from builtin.events.conversion import from_core, to_core
from generated.server import build_scheme

EVENTS_VIEW = ResourceType(
    group="events.k8s.io",
    kind="Event",
    plural="events",
    singular="event",
    list_kind="EventList",
    namespaced=True,
    builtin=True,
    stored_as=("", "events"),
    versions=(
        VersionType(
            name="v1",
            served=True,
            storage=True,
            schema={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            to_internal=to_core,
            from_internal=from_core,
        ),
    ),
)


def events_v1(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2026-12-01T21:00:00.000000Z",
        "reportingController": "example.com/c",
        "reportingInstance": "c-0",
        "action": "Act",
        "reason": "Because",
        "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "note": "hello",
        "type": "Normal",
    }


def core_v1(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Because",
        "message": "from core",
    }


def stores() -> tuple[Store, Store]:
    core = build_scheme().resource("", "events")
    assert core is not None
    storage = MemoryStorage()
    return Store(core, storage), Store(EVENTS_VIEW, storage)


def test_the_view_keys_are_the_stored_resource_keys() -> None:
    assert object_key(EVENTS_VIEW, "default", "e") == "/registry/events/default/e"
    assert not EVENTS_VIEW.wire_is_internal(EVENTS_VIEW.versions[0])


def test_written_through_one_read_through_the_other() -> None:
    async def body() -> None:
        core, view = stores()
        await view.create("default", events_v1("a"), version=EVENTS_VIEW.versions[0])
        stored = await core.get("default", "a")
        assert stored["apiVersion"] == "v1"
        assert stored["involvedObject"]["name"] == "x"
        assert stored["message"] == "hello"
        assert stored["reportingComponent"] == "example.com/c"

        await core.create("default", core_v1("b"))
        read = to_version(await view.get("default", "b"), EVENTS_VIEW, EVENTS_VIEW.versions[0])
        assert read["apiVersion"] == "events.k8s.io/v1"
        assert read["regarding"]["name"] == "x"
        assert read["note"] == "from core"
        assert "message" not in read and "involvedObject" not in read

        for store in (core, view):
            names = {
                o["metadata"]["name"] for o in (await store.list("default", ListOptions())).items
            }
            assert names == {"a", "b"}

    asyncio.run(asyncio.wait_for(body(), timeout=10))


def test_a_watch_on_the_view_sees_core_writes_and_deletes() -> None:
    async def body() -> None:
        core, view = stores()
        start = await view.current_revision()
        changes = view.watch("default", start, None)
        await core.create("default", core_v1("c"))
        await core.delete("default", "c")
        added = await anext(changes)
        deleted = await anext(changes)
        await changes.aclose()
        assert (added.type, added.object["message"]) == ("ADDED", "from core")
        assert deleted.type == "DELETED"

    asyncio.run(asyncio.wait_for(body(), timeout=10))
