"""Metadata-only watches (``Store.open_watch(metadata_only=True)``, the garbage collector's informer): each
event carries ``metadata_view`` of the value written, made from the object the store just wrote instead of
its bytes decoded again, and exactly what the view of the decoded value would be, whatever the writer does
with its object afterwards."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.registry.metaview import metadata_view
from apiserver.registry.store import Store, StoreWatch, WatchEvent
from apiserver.storage.memory import MemoryStorage
from tests.widgets import WIDGETS

Object = dict[str, Any]
TIMEOUT = 5.0
OWNER = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "name": "owner",
    "uid": "0b6c3c4e-4a5e-4c1b-9f5e-1d2a3b4c5d6e",
    "blockOwnerDeletion": True,
}


def owned(name: str) -> Object:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {
            "name": name,
            "labels": {"app": "web"},
            "finalizers": ["example.com/keep"],
            "ownerReferences": [dict(OWNER)],
        },
        "spec": {"size": 1},
    }


def resized(obj: Object) -> Object:
    obj["spec"]["size"] += 1
    return obj


def released(obj: Object) -> Object:
    """An update that takes the finalizer away: it finishes a pending deletion."""
    obj["metadata"].pop("finalizers", None)
    return obj


async def taken(changes: StoreWatch, count: int) -> list[WatchEvent]:
    events: list[WatchEvent] = []
    while len(events) < count:
        batch = await asyncio.wait_for(changes.batch(100), TIMEOUT)
        assert batch is not None
        events += batch
    return events


def test_the_view_holds_type_identity_ownership_and_deletion_in_containers_of_its_own() -> None:
    obj = owned("a")
    obj["metadata"].update(uid="u-1", namespace="ns", deletionTimestamp="2026-01-01T00:00:00Z")
    view = metadata_view(obj, "7")
    assert view == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "uid": "u-1",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["example.com/keep"],
            "ownerReferences": [OWNER],
            "resourceVersion": "7",
        },
    }
    obj["metadata"]["finalizers"].append("more")
    obj["metadata"]["ownerReferences"][0]["name"] = "another"
    assert view["metadata"]["finalizers"] == ["example.com/keep"]
    assert view["metadata"]["ownerReferences"] == [OWNER]


def test_a_metadata_only_watch_sees_the_view_of_every_value_written() -> None:
    """Side by side with a full watch of the same store: the same events, each carrying the view of the
    full event's object; the store's own writes are served from the views it made (the writer then
    changing the object it got back reaches none of them), a write of another replica and a deletion
    finished by an update from the value decoded."""
    asyncio.run(side_by_side())


async def side_by_side() -> None:
    storage = MemoryStorage()
    await storage.start()
    store, replica = Store(WIDGETS, storage), Store(WIDGETS, storage)
    full = store.open_watch(None, 0, None)
    views = store.open_watch(None, 0, None, metadata_only=True)
    try:
        created = await store.create(None, owned("a"))
        assert len(store._views) == 1  # made as the write was stored
        created["metadata"]["finalizers"].append("example.com/changed-afterwards")
        created["metadata"]["ownerReferences"][0]["name"] = "changed-afterwards"
        await store.update(None, "a", resized)
        await store.delete(None, "a")  # the finalizer holds it: marked for deletion
        await store.update(None, "a", released)  # gone now: the update finished the deletion
        await replica.create(None, owned("b"))
        expected = await taken(full, 5)
        seen = await taken(views, 5)
        assert [(e.type, e.revision) for e in seen] == [(e.type, e.revision) for e in expected]
        assert [e.type for e in seen] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED", "ADDED"]
        for mine, theirs in zip(seen, expected, strict=True):
            assert mine.object == metadata_view(theirs.object, str(theirs.revision))
        assert seen[0].object["metadata"]["ownerReferences"] == [OWNER]
        assert store._views == {}  # a lone metadata watcher takes each view for good
    finally:
        await full.close()
        await views.close()
        await storage.close()
    assert (store._watches, store._view_watches) == (0, 0)


def test_no_view_is_made_without_a_metadata_only_watcher() -> None:
    asyncio.run(without_metadata_watcher())


async def without_metadata_watcher() -> None:
    storage = MemoryStorage()
    await storage.start()
    store = Store(WIDGETS, storage)
    full = store.open_watch(None, 0, None)
    try:
        await store.create(None, owned("a"))
        assert store._views == {}
    finally:
        await full.close()
        await storage.close()


def test_a_metadata_only_watch_has_no_selector() -> None:
    with pytest.raises(ValueError):
        Store(WIDGETS, MemoryStorage()).open_watch(None, 0, lambda obj: True, metadata_only=True)
