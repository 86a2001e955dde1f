"""Conformance checks of lists: key order, prefixes, pages at one revision, and lists at an old revision."""

from __future__ import annotations

from apiserver.storage.interface import (
    FutureRevisionError,
    KeyValue,
)
from apiserver.storage.testing.support import PREFIX, Check, OpenStore, key, keys_of, raises


async def list_returns_keys_in_order_and_only_under_the_prefix(open_store: OpenStore) -> None:
    async with open_store() as s:
        for name in [
            "/registry/a/z",
            "/registry/ab/x",
            "/registry/a/b",
            "/registry/a",
            "/registry/b/a",
        ]:
            await s.create(name, name.encode())
        await s.create("/registry/a/gone", b"")
        await s.delete("/registry/a/gone")
        await s.create("/registry/a/m", b"m")

        result = await s.list("/registry/a/")
        assert keys_of(result.items) == ["/registry/a/b", "/registry/a/m", "/registry/a/z"]
        assert result.items[0] == KeyValue("/registry/a/b", b"/registry/a/b", 3, 3)
        assert (result.revision, result.remaining, result.more) == (8, 0, False)

        everything = await s.list("/registry/")
        assert keys_of(everything.items) == [
            "/registry/a",
            "/registry/a/b",
            "/registry/a/m",
            "/registry/a/z",
            "/registry/ab/x",
            "/registry/b/a",
        ]
        assert keys_of((await s.list("")).items) == keys_of(everything.items)
        assert (await s.list("/registry/c/")).items == []


async def prefixes_work_for_keys_beyond_ascii(open_store: OpenStore) -> None:
    """A prefix range ends at the next code point; U+D7FF and U+10FFFF have no plain next one."""
    async with open_store() as s:
        names = [
            "/registry/é/a",
            "/registry/\ud7ff/a",
            "/registry/\ue000/a",
            "/registry/\U0010ffff/a",
        ]
        for name in names:
            await s.create(name, b"")
        for name in names:
            for prefix in (name.removesuffix("/a"), name.removesuffix("a")):
                assert keys_of((await s.list(prefix)).items) == [name]
        assert keys_of((await s.list("/registry/")).items) == sorted(names)


async def list_starts_at_start_key_inclusive(open_store: OpenStore) -> None:
    async with open_store() as s:
        for name in "abcde":
            await s.create(key(name), name.encode())
        assert keys_of((await s.list(PREFIX, start_key=key("c"))).items) == [
            key("c"),
            key("d"),
            key("e"),
        ]
        assert keys_of((await s.list(PREFIX, start_key=key("bb"))).items) == [
            key("c"),
            key("d"),
            key("e"),
        ]
        assert len((await s.list(PREFIX, start_key="/registry/")).items) == 5  # below the prefix
        assert (await s.list(PREFIX, start_key="/registry/zzz")).items == []  # above the prefix


async def pages_stay_consistent_at_one_revision_while_writes_happen(
    open_store: OpenStore,
) -> None:
    async with open_store() as s:
        for i in range(10):
            await s.create(key(f"k{i:02d}"), b"old")

        first = await s.list(PREFIX, limit=4)
        assert keys_of(first.items) == [key(f"k{i:02d}") for i in range(4)]
        assert (first.revision, first.remaining, first.more) == (10, 6, True)

        await s.delete(key("k05"))
        await s.update(key("k06"), b"new", 7)
        await s.create(key("k045"), b"new")
        await s.create(key("k10"), b"new")

        second = await s.list(
            PREFIX, limit=4, start_key=first.items[-1].key + "\x00", revision=first.revision
        )
        assert keys_of(second.items) == [key(f"k{i:02d}") for i in range(4, 8)]
        assert {kv.value for kv in second.items} == {b"old"}
        assert (second.revision, second.remaining) == (10, 2)

        last = await s.list(
            PREFIX, limit=4, start_key=second.items[-1].key + "\x00", revision=first.revision
        )
        assert keys_of(last.items) == [key("k08"), key("k09")]
        assert (last.remaining, last.more) == (0, False)

        exact = await s.list(PREFIX, limit=2, start_key=key("k08"), revision=first.revision)
        assert (len(exact.items), exact.remaining) == (2, 0)

        latest = await s.list(PREFIX, limit=7)
        assert keys_of(latest.items)[4:] == [key("k04"), key("k045"), key("k06")]
        assert latest.items[6].value == b"new"
        assert (latest.revision, latest.remaining) == (14, 4)  # k07, k08, k09, k10; k05 is gone


async def list_at_an_old_revision_sees_the_state_of_then(open_store: OpenStore) -> None:
    async with open_store() as s:
        await s.create(key("a"), b"a1")  # 1
        await s.create(key("b"), b"b1")  # 2
        await s.update(key("a"), b"a2", 1)  # 3
        await s.delete(key("b"))  # 4
        await s.create(key("c"), b"c1")  # 5

        def state(items: list[KeyValue]) -> list[tuple[str, bytes, int]]:
            return [(kv.key[len(PREFIX) :], kv.value, kv.mod_revision) for kv in items]

        expected = {
            1: [("a", b"a1", 1)],
            2: [("a", b"a1", 1), ("b", b"b1", 2)],
            3: [("a", b"a2", 3), ("b", b"b1", 2)],
            4: [("a", b"a2", 3)],
            5: [("a", b"a2", 3), ("c", b"c1", 5)],
        }
        for revision, items in expected.items():
            result = await s.list(PREFIX, revision=revision)
            assert (state(result.items), result.revision) == (items, revision)
        assert (await s.list(PREFIX)).revision == 5
        page = await s.list(PREFIX, limit=1, revision=2)
        assert (state(page.items), page.remaining) == ([("a", b"a1", 1)], 1)


async def revisions_after_the_current_one_are_future(open_store: OpenStore) -> None:
    async with open_store() as s:
        with raises(FutureRevisionError):
            await s.list(PREFIX, revision=1)
        await s.create(key("a"), b"")
        with raises(FutureRevisionError) as raised:
            await s.list(PREFIX, revision=2)
        assert (raised.value.requested, raised.value.current) == (2, 1)
        with raises(FutureRevisionError):
            await s.compact(2)


LISTS: dict[str, Check] = {
    "list_returns_keys_in_order_and_only_under_the_prefix": list_returns_keys_in_order_and_only_under_the_prefix,
    "prefixes_work_for_keys_beyond_ascii": prefixes_work_for_keys_beyond_ascii,
    "list_starts_at_start_key_inclusive": list_starts_at_start_key_inclusive,
    "pages_stay_consistent_at_one_revision_while_writes_happen": pages_stay_consistent_at_one_revision_while_writes_happen,
    "list_at_an_old_revision_sees_the_state_of_then": list_at_an_old_revision_sees_the_state_of_then,
    "revisions_after_the_current_one_are_future": revisions_after_the_current_one_are_future,
}
