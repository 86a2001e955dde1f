"""A bounded map whose entries expire, as k8s.io/apimachinery's LRUExpireCache is used by the cached token
authenticator and the webhook authorizer: a delegated review answered once is not asked again for its TTL."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class TTLCache(Generic[V]):
    """At most ``size`` entries, the least recently used dropped first."""

    def __init__(self, size: int = 4096, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.clock = clock
        self.entries: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def get(self, key: str) -> V | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        expiry, value = entry
        if self.clock() >= expiry:
            del self.entries[key]
            return None
        self.entries.move_to_end(key)
        return value

    def set(self, key: str, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        self.entries[key] = (self.clock() + ttl, value)
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
