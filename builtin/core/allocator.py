"""A range of values (cluster IPs, node ports) handed out one storage key per value, so that every server
sharing the storage agrees on who holds what, across restarts and replicas.

kube keeps one bitmap object per range (``/registry/ranges/serviceips``) and writes it with a compare-and-swap;
a key per value (as kube's newer IPAddress objects do) makes taking a value the storage's own atomic
create-if-absent: two servers racing for one value cannot both succeed, and nothing else is rewritten.
Each key holds its holder (namespace, name, uid), so a release never frees a value someone else took since.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import orjson

from apiserver.storage.interface import (
    KeyExistsError,
    KeyNotFoundError,
    RevisionConflictError,
    Storage,
)

_NEXT_ATTEMPTS = 16  # races lost in a row before giving up (each loss re-reads what is taken)


class AlreadyAllocatedError(Exception):
    """The value is held by another object."""


class RangeFullError(Exception):
    """Every value of the range is held (kube's ErrFull, "range is full")."""

    def __init__(self) -> None:
        super().__init__("range is full")


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a value: the object, by uid (a recreated object of the same name is another holder)."""

    namespace: str
    name: str
    uid: str

    def encode(self) -> bytes:
        return orjson.dumps({"namespace": self.namespace, "name": self.name, "uid": self.uid})


class RangeAllocator:
    """Values ``0 .. size-1`` of a range, each the key ``prefix + text(index)``.

    As kube's allocators, a value picked for an object that asked for none comes from above the static band
    (the first ``static_band`` values, which users pick by hand, e.g. the DNS service's IP) while any is
    free there; then from the band."""

    def __init__(
        self,
        storage: Storage,
        prefix: str,
        size: int,
        text: Callable[[int], str],
        static_band: int = 0,
    ) -> None:
        self.storage = storage
        self.prefix = prefix
        self.size = size
        self.text = text
        self.static_band = static_band

    def key(self, index: int) -> str:
        return self.prefix + self.text(index)

    async def allocate(self, index: int, holder: Holder, dry_run: bool) -> None:
        """Take ``index`` for ``holder``; AlreadyAllocatedError when another holds it."""
        if dry_run:
            if await self.storage.get(self.key(index)) is not None:
                raise AlreadyAllocatedError
            return
        try:
            await self.storage.create(self.key(index), holder.encode())
        except KeyExistsError:
            raise AlreadyAllocatedError from None

    async def allocate_next(self, holder: Holder, dry_run: bool) -> int:
        """Take some free value for ``holder``; RangeFullError when none is left."""
        for _ in range(_NEXT_ATTEMPTS):
            taken = await self._taken()
            free = next((i for i in self._candidates() if self.text(i) not in taken), None)
            if free is None:
                raise RangeFullError
            try:
                await self.allocate(free, holder, dry_run)
            except AlreadyAllocatedError:
                continue  # another server took it in between: look again
            return free
        raise RangeFullError

    async def release(self, index: int, holder: Holder) -> None:
        """Give ``index`` back, if ``holder`` still holds it."""
        key = self.key(index)
        kv = await self.storage.get(key)
        if kv is None or kv.value != holder.encode():
            return
        # released or retaken meanwhile: no longer ours
        with contextlib.suppress(KeyNotFoundError, RevisionConflictError):
            await self.storage.delete(key, kv.mod_revision)

    async def _taken(self) -> set[str]:
        page = await self.storage.list(self.prefix)
        return {kv.key[len(self.prefix) :] for kv in page.items}

    def _candidates(self) -> Iterator[int]:
        """Every index, starting at a random one of the dynamic band, then the static band's."""
        dynamic = self.size - self.static_band
        start = random.randrange(dynamic) if dynamic > 0 else 0
        for step in range(dynamic):
            yield self.static_band + (start + step) % dynamic
        yield from range(self.static_band)
