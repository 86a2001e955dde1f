"""Conformance checks of writes: revisions, create-only, compare-and-swap updates and deletes, and writes in
flight together."""

from __future__ import annotations

import asyncio

from apiserver.storage.interface import (
    MAX_REQUEST_BYTES,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    RevisionConflictError,
    ValueTooLargeError,
)
from apiserver.storage.testing.support import Check, OpenStore, key, raises


async def revisions_start_at_one_and_increase_by_one_per_write(open_store: OpenStore) -> None:
    async with open_store() as s:
        assert await s.current_revision() == 0
        created = await s.create(key("a"), b"1")
        updated = await s.update(key("a"), b"2", created.mod_revision)
        other = await s.create(key("b"), b"x")
        deleted = await s.delete(key("a"))
        assert [kv.mod_revision for kv in (created, updated, other, deleted)] == [1, 2, 3, 4]
        assert (updated.create_revision, deleted.create_revision) == (1, 1)
        assert await s.current_revision() == 4

        with raises(KeyExistsError):
            await s.create(key("b"), b"y")
        with raises(RevisionConflictError):
            await s.update(key("b"), b"y", 1)
        assert await s.current_revision() == 4  # failed writes take no revision
        assert (await s.create(key("c"), b"z")).mod_revision == 5


async def create_fails_when_the_key_exists_and_works_again_after_delete(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        first = await s.create(key("a"), b"first")
        with raises(KeyExistsError) as raised:
            await s.create(key("a"), b"second")
        assert raised.value.key == key("a")
        assert await s.get(key("a")) == first
        assert await s.get(key("missing")) is None

        await s.delete(key("a"))
        assert await s.get(key("a")) is None
        again = await s.create(key("a"), b"again")
        assert again == KeyValue(key("a"), b"again", 3, 3)


async def concurrent_creates_of_one_key_have_exactly_one_winner(open_store: OpenStore) -> None:
    async with open_store() as s:
        outcomes = await asyncio.gather(
            *(s.create(key("a"), str(i).encode()) for i in range(10)), return_exceptions=True
        )
        winners = [o for o in outcomes if isinstance(o, KeyValue)]
        assert len(winners) == 1
        assert all(isinstance(o, KeyExistsError) for o in outcomes if o not in winners)
        assert await s.get(key("a")) == winners[0]
        assert await s.current_revision() == 1


async def writes_in_flight_together_each_get_their_own_outcome(open_store: OpenStore) -> None:
    """Concurrent writes may share one commit; a failed precondition fails only its own write."""
    async with open_store() as s:
        await s.create(key("existing"), b"")
        outcomes = await asyncio.gather(
            s.create(key("x"), b"x"),
            s.update(key("missing"), b"", 1),
            s.create(key("existing"), b""),
            s.create(key("y"), b"y"),
            s.delete(key("missing")),
            return_exceptions=True,
        )
        x, update_missing, create_existing, y, delete_missing = outcomes
        assert isinstance(update_missing, KeyNotFoundError)
        assert isinstance(create_existing, KeyExistsError)
        assert isinstance(delete_missing, KeyNotFoundError)
        assert isinstance(x, KeyValue) and isinstance(y, KeyValue)
        assert {x.mod_revision, y.mod_revision} == {2, 3}
        assert await s.current_revision() == 3


async def update_is_compare_and_swap_on_the_mod_revision(open_store: OpenStore) -> None:
    async with open_store() as s:
        with raises(KeyNotFoundError):
            await s.update(key("a"), b"v", 0)
        created = await s.create(key("a"), b"v1")
        updated = await s.update(key("a"), b"v2", created.mod_revision)
        assert updated == KeyValue(key("a"), b"v2", 1, 2)

        with raises(RevisionConflictError) as raised:
            await s.update(key("a"), b"stale", created.mod_revision)
        assert (raised.value.key, raised.value.expected) == (key("a"), 1)
        assert raised.value.current == updated
        assert await s.get(key("a")) == updated

        await s.delete(key("a"))
        with raises(KeyNotFoundError):
            await s.update(key("a"), b"v3", updated.mod_revision)


async def update_given_the_create_revision_is_the_same_compare_and_swap(
    open_store: OpenStore,
) -> None:
    """The caller's create_revision spares etcd a read-back; nothing else about the write changes."""
    async with open_store() as s:
        await s.create(key("other"), b"")  # 1: create and mod revisions of "a" differ below
        created = await s.create(key("a"), b"v1")  # 2
        updated = await s.update(
            key("a"), b"v2", created.mod_revision, create_revision=created.create_revision
        )
        assert updated == KeyValue(key("a"), b"v2", 2, 3)
        assert await s.get(key("a")) == updated
        again = await s.update(key("a"), b"v3", 3, create_revision=2)
        assert again == KeyValue(key("a"), b"v3", 2, 4)

        with raises(RevisionConflictError) as raised:
            await s.update(key("a"), b"stale", created.mod_revision, create_revision=2)
        assert raised.value.current == again
        await s.delete(key("a"))
        with raises(KeyNotFoundError):
            await s.update(key("a"), b"gone", again.mod_revision, create_revision=2)


async def concurrent_read_modify_write_loses_no_update(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("counter"), b"0")
        conflicts = 0

        async def increment() -> None:
            nonlocal conflicts
            while True:
                current = await s.get(key("counter"))
                assert current is not None
                await asyncio.sleep(0)  # let the other writers read the same revision
                try:
                    await s.update(
                        key("counter"), b"%d" % (int(current.value) + 1), current.mod_revision
                    )
                    return
                except RevisionConflictError:
                    conflicts += 1

        await asyncio.gather(*(increment() for _ in range(20)))
        final = await s.get(key("counter"))
        assert final is not None
        assert final.value == b"20"
        assert final.mod_revision == 21
        assert conflicts > 0  # the test really raced


async def delete_returns_the_last_value_and_honours_the_expected_revision(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        with raises(KeyNotFoundError):
            await s.delete(key("a"))
        created = await s.create(key("a"), b"v1")
        updated = await s.update(key("a"), b"v2", created.mod_revision)

        with raises(RevisionConflictError) as raised:
            await s.delete(key("a"), expected_revision=created.mod_revision)
        assert raised.value.current == updated
        assert await s.get(key("a")) == updated

        deleted = await s.delete(key("a"), expected_revision=updated.mod_revision)
        assert deleted == KeyValue(key("a"), b"v2", 1, 3)
        assert await s.get(key("a")) is None
        with raises(KeyNotFoundError):
            await s.delete(key("a"))

        await s.create(key("b"), b"x")
        assert (await s.delete(key("b"))).mod_revision == 5  # no expected revision: unconditional


async def values_over_the_request_limit_are_refused_before_writing(open_store: OpenStore) -> None:
    """Every backend refuses what etcd's default request limit refuses, with etcd's words, and writes
    nothing: an object storable on one backend is storable on all."""
    big = b"x" * MAX_REQUEST_BYTES
    async with open_store() as s:
        with raises(ValueTooLargeError) as raised:
            await s.create(key("big"), big)
        assert str(raised.value) == "etcdserver: request is too large"
        small = await s.create(key("small"), b"1")
        with raises(ValueTooLargeError):
            await s.update(key("small"), big, small.mod_revision)
        assert await s.get(key("big")) is None
        assert await s.get(key("small")) == small
        assert await s.current_revision() == small.mod_revision  # refused writes take no revision
        fits = b"x" * (MAX_REQUEST_BYTES - 1024)
        assert (await s.update(key("small"), fits, small.mod_revision)).mod_revision == 2


WRITES: dict[str, Check] = {
    "revisions_start_at_one_and_increase_by_one_per_write": revisions_start_at_one_and_increase_by_one_per_write,
    "create_fails_when_the_key_exists_and_works_again_after_delete": create_fails_when_the_key_exists_and_works_again_after_delete,
    "concurrent_creates_of_one_key_have_exactly_one_winner": concurrent_creates_of_one_key_have_exactly_one_winner,
    "writes_in_flight_together_each_get_their_own_outcome": writes_in_flight_together_each_get_their_own_outcome,
    "update_is_compare_and_swap_on_the_mod_revision": update_is_compare_and_swap_on_the_mod_revision,
    "update_given_the_create_revision_is_the_same_compare_and_swap": update_given_the_create_revision_is_the_same_compare_and_swap,
    "concurrent_read_modify_write_loses_no_update": concurrent_read_modify_write_loses_no_update,
    "delete_returns_the_last_value_and_honours_the_expected_revision": delete_returns_the_last_value_and_honours_the_expected_revision,
    "values_over_the_request_limit_are_refused_before_writing": values_over_the_request_limit_are_refused_before_writing,
}
