"""Store.update's first guess (kube's cachedExistingObject): the watch cache's copy, or this server's own
last write when the cache has not seen it yet. A right guess saves the storage read; a wrong one must
never change the outcome: the write's compare-and-swap fails and the loop goes on from what storage
holds, so preconditions and conflicts answer as they would without any guess."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from apiserver.machinery import errors
from apiserver.patch.jsonpatch import PatchError, apply_json_patch
from apiserver.registry.cacher import WatchCache
from apiserver.registry.keys import key_prefix, object_key
from apiserver.registry.store import WRITTEN_CAPACITY, Store
from apiserver.schema.validation import validate
from apiserver.storage.interface import KeyValue
from apiserver.storage.memory import MemoryStorage
from tests.widgets import WIDGETS

Object = dict[str, Any]


class CountingStorage(MemoryStorage):
    """Counts the point reads an update makes: the guess is there to avoid them."""

    def __init__(self) -> None:
        super().__init__()
        self.gets = 0

    async def get(self, key: str) -> KeyValue | None:
        self.gets += 1
        return await super().get(key)


def widget(name: str, size: int) -> Object:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": size},
    }


def resize(size: int, resource_version: str = "") -> Callable[[Object], Object]:
    """A PUT's update function: the new size, with the client's resourceVersion as a precondition."""

    def update(current: Object) -> Object:
        current["spec"]["size"] = size
        if resource_version:
            current["metadata"]["resourceVersion"] = resource_version
        else:
            current["metadata"].pop("resourceVersion", None)
        return current

    return update


async def with_lagging_cache(
    body: Callable[[Store, Store, CountingStorage], Awaitable[None]],
) -> None:
    """A store whose watch cache has stopped following storage (as an etcd-backed cache is a round trip
    behind), and a second store on the same storage standing for another replica."""
    storage = CountingStorage()
    await storage.start()
    cache = WatchCache(storage, key_prefix(WIDGETS))
    await cache.start()
    await cache.stop()  # frozen at the (empty) state it listed
    try:
        await body(Store(WIDGETS, storage, cache=cache), Store(WIDGETS, storage), storage)
    finally:
        await storage.close()


def run(body: Callable[[Store, Store, CountingStorage], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(with_lagging_cache(body), timeout=10))


def test_an_update_after_this_servers_own_write_needs_no_storage_read() -> None:
    async def body(store: Store, _: Store, storage: CountingStorage) -> None:
        created = await store.create(None, widget("w", 1))
        updated = await store.update(None, "w", resize(2, created["metadata"]["resourceVersion"]))
        again = await store.update(None, "w", resize(3, updated["metadata"]["resourceVersion"]))
        assert again["spec"] == {"size": 3}
        assert storage.gets == 0

    run(body)


def test_a_stale_guess_still_answers_409_to_a_stale_precondition() -> None:
    async def body(store: Store, replica: Store, storage: CountingStorage) -> None:
        created = await store.create(None, widget("w", 1))
        version = created["metadata"]["resourceVersion"]
        await replica.update(None, "w", resize(5))  # this store's guess is now stale
        with pytest.raises(errors.APIError) as conflict:
            await store.update(None, "w", resize(2, version))
        assert conflict.value.code == 409
        assert (await replica.get(None, "w"))["spec"] == {"size": 5}

    run(body)


def test_a_stale_guess_without_a_precondition_applies_to_what_storage_holds() -> None:
    async def body(store: Store, replica: Store, storage: CountingStorage) -> None:
        await store.create(None, widget("w", 1))
        moved = await replica.update(None, "w", resize(5))
        storage.gets = 0
        updated = await store.update(None, "w", resize(7))
        assert updated["spec"] == {"size": 7}
        assert int(updated["metadata"]["resourceVersion"]) > int(
            moved["metadata"]["resourceVersion"]
        )
        assert storage.gets == 0  # the failed compare-and-swap handed back the stored value

    run(body)


def test_an_object_deleted_behind_a_stale_guess_is_404() -> None:
    async def body(store: Store, replica: Store, storage: CountingStorage) -> None:
        await store.create(None, widget("w", 1))
        await replica.delete(None, "w")
        with pytest.raises(errors.APIError) as missing:
            await store.update(None, "w", resize(2))
        assert missing.value.code == 404

    run(body)


def test_a_no_op_on_a_stale_guess_is_judged_on_what_storage_holds() -> None:
    """Sizing to what the guess already says is a change against storage's newer value."""

    async def body(store: Store, replica: Store, storage: CountingStorage) -> None:
        await store.create(None, widget("w", 1))
        await replica.update(None, "w", resize(5))
        updated = await store.update(None, "w", resize(1))
        assert updated["spec"] == {"size": 1}
        assert (await replica.get(None, "w"))["spec"] == {"size": 1}

    run(body)


def test_a_dry_run_on_a_stale_guess_answers_what_storage_would() -> None:
    async def body(store: Store, replica: Store, storage: CountingStorage) -> None:
        created = await store.create(None, widget("w", 1))
        await replica.update(None, "w", resize(5))
        with pytest.raises(errors.APIError) as conflict:
            await store.update(
                None, "w", resize(2, created["metadata"]["resourceVersion"]), dry_run=True
            )
        assert conflict.value.code == 409
        shown = await store.update(None, "w", resize(2), dry_run=True)
        assert int(shown["metadata"]["resourceVersion"]) > int(
            created["metadata"]["resourceVersion"]
        )
        await replica.delete(None, "w")
        with pytest.raises(errors.APIError) as missing:
            await store.update(None, "w", resize(3), dry_run=True)
        assert missing.value.code == 404

    run(body)


def test_an_update_function_that_fails_on_a_stale_guess_is_retried_on_storage() -> None:
    """A JSON patch whose `test` op holds for the stored object but not for the stale guess."""

    async def body(store: Store, replica: Store, storage: CountingStorage) -> None:
        await store.create(None, widget("w", 1))
        await replica.update(None, "w", resize(5))

        def patch(current: Object) -> Object:
            try:
                return apply_json_patch(
                    current,
                    [
                        {"op": "test", "path": "/spec/size", "value": 5},
                        {"op": "replace", "path": "/spec/size", "value": 6},
                    ],
                )
            except PatchError as error:
                raise errors.APIError(422, "Invalid", str(error)) from None

        assert (await store.update(None, "w", patch))["spec"] == {"size": 6}

    run(body)


def test_the_own_writes_kept_are_only_those_the_cache_has_not_seen() -> None:
    """The guess memo must not grow into a second copy of the cache (values can be a MiB each)."""

    async def body() -> None:
        storage = CountingStorage()
        await storage.start()
        cache = WatchCache(storage, key_prefix(WIDGETS))
        await cache.start()
        store = Store(WIDGETS, storage, cache=cache)
        try:
            for index in range(200):
                await store.create(None, widget(f"w{index}", index))
                await asyncio.sleep(0)  # the cache follows
            # each write prunes those the cache has applied: at most the last write or two remain
            assert len(store._written) <= 2
            assert all(kv.mod_revision > cache.revision for kv in store._written.values())
        finally:
            await cache.stop()
            await storage.close()

    asyncio.run(asyncio.wait_for(body(), timeout=10))


def test_without_a_cache_the_own_writes_kept_are_bounded_and_the_oldest_go_first() -> None:
    async def body() -> None:
        storage = CountingStorage()
        await storage.start()
        store = Store(WIDGETS, storage)
        try:
            for index in range(WRITTEN_CAPACITY + 10):
                await store.create(None, widget(f"w{index}", index))
            assert len(store._written) == WRITTEN_CAPACITY
            kept = list(store._written)
            assert kept[0] == object_key(WIDGETS, None, "w10")
            assert kept[-1] == object_key(WIDGETS, None, f"w{WRITTEN_CAPACITY + 9}")
        finally:
            await storage.close()

    asyncio.run(asyncio.wait_for(body(), timeout=30))


SIZE_SCHEMA: Object = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0}}}
    },
}
SIZED = dataclasses.replace(
    WIDGETS,
    versions=(
        dataclasses.replace(
            WIDGETS.versions[0],
            schema=SIZE_SCHEMA,
            validator=lambda obj: validate(obj, SIZE_SCHEMA),
        ),
    ),
)
"""Widgets whose schema refuses a negative size."""


def put(update: Callable[[Object], Object]) -> Callable[[Object], Object]:
    """``update`` as a PUT makes it: on a body of its own, not on the stored object changed in place (which
    validation ratcheting would let pass, unchanged)."""
    return lambda current: update(copy.deepcopy(current))


def test_a_stale_precondition_is_a_conflict_before_the_object_is_judged() -> None:
    """kube's GuaranteedUpdate checks the resourceVersion before the strategy validates
    (k8s.io/apiserver/pkg/registry/generic/registry/store.go, Update): a stale, invalid update is 409."""

    async def body() -> None:
        storage = MemoryStorage()
        await storage.start()
        store = Store(SIZED, storage)
        try:
            created = await store.create(None, widget("w", 1))
            await store.update(None, "w", resize(2))
            stale = created["metadata"]["resourceVersion"]
            for precondition, code in ((stale, 409), ("", 422)):
                with pytest.raises(errors.APIError) as refused:
                    await store.update(None, "w", put(resize(-1, precondition)))
                assert refused.value.code == code
        finally:
            await storage.close()

    asyncio.run(asyncio.wait_for(body(), timeout=10))
