"""What the conformance checks share: the store opener's type, keys, a watch reader with timeouts, and an
assertion that a block raises (the checks are plain coroutines, so they need no test framework)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Generic, TypeVar

from apiserver.storage.interface import EventType, KeyValue, Storage, StorageEvent, Watch

OpenStore = Callable[[], AbstractAsyncContextManager[Storage]]
"""Opens (starts) a fresh, empty backend for the length of an ``async with`` and closes it after."""
Check = Callable[[OpenStore], Awaitable[None]]
"""One conformance check: it opens the store itself and raises AssertionError when the backend fails it."""

PREFIX = "/registry/widgets/"
TIMEOUT = 5.0
QUIET = 0.05  # how long "no further event" is waited for

E = TypeVar("E", bound=BaseException)


def key(name: str, prefix: str = PREFIX) -> str:
    return f"{prefix}{name}"


class Raised(Generic[E]):
    """The exception a :func:`raises` block raised, once it has."""

    value: E


@contextmanager
def raises(expected: type[E]) -> Iterator[Raised[E]]:
    """The block must raise ``expected`` (which is then ``.value``); anything else, or nothing, fails."""
    raised: Raised[E] = Raised()
    try:
        yield raised
    except expected as error:
        raised.value = error
        return
    raise AssertionError(f"{expected.__name__} was not raised")


class Events:
    """Reads one watch through a single iterator, with timeouts so a missing event fails the check."""

    def __init__(self, watch: Watch, timeout: float = TIMEOUT) -> None:
        self.watch = watch
        self.timeout = timeout  # for each event taken
        self._iterator = aiter(watch)

    async def take(self, count: int) -> list[StorageEvent]:
        return [await asyncio.wait_for(anext(self._iterator), self.timeout) for _ in range(count)]

    async def rest(self) -> list[StorageEvent]:
        """Every event until the watch ends."""
        return [event async for event in self._iterator]

    async def assert_quiet(self, seconds: float = QUIET) -> None:
        """No further event arrives within ``seconds`` (a short grace period by default)."""
        with raises(TimeoutError):
            await asyncio.wait_for(anext(self._iterator), seconds)

    async def close(self) -> None:
        await self.watch.close()


def summary(events: list[StorageEvent]) -> list[tuple[EventType, str, bytes, int]]:
    return [(e.type, e.kv.key, e.kv.value, e.revision) for e in events]


def keys_of(items: list[KeyValue]) -> list[str]:
    return [kv.key for kv in items]
