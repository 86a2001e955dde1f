"""One timer for every idle keep-alive connection of an event loop (kube's IdleTimeout, Go's net/http
closing a kept-alive connection that sends nothing), instead of uvicorn's timer per response: arming and
cancelling a loop timer for each request cost more than the rest of the connection's work on a GET.

A connection that finishes a response records its deadline; the sweep closes the connections whose
deadline has passed, then waits for the next deadline, at least ``GRANULARITY`` away: a connection is
never closed early, and late by at most that much (uvicorn's own timeout is in whole seconds)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

GRANULARITY = 0.25

Close = Callable[[], None]


class IdleSweep:
    """The idle connections of one loop, each with its deadline and what closes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.idle: dict[object, tuple[float, Close]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, connection: object, seconds: float, close: Close) -> None:
        """``connection`` is idle from now: ``close`` it once ``seconds`` pass without ``discard``."""
        deadline = self.loop.time() + seconds
        self.idle[connection] = (deadline, close)
        if self._timer is None:
            self._timer = self.loop.call_at(deadline, self._sweep)

    def discard(self, connection: object) -> None:
        """``connection`` is busy again, or gone."""
        self.idle.pop(connection, None)

    def _sweep(self) -> None:
        self._timer = None
        now = self.loop.time()
        upcoming: float | None = None
        for connection, (deadline, close) in list(self.idle.items()):
            if deadline <= now:
                del self.idle[connection]
                close()
            elif upcoming is None or deadline < upcoming:
                upcoming = deadline
        if upcoming is not None:
            self._timer = self.loop.call_at(max(upcoming, now + GRANULARITY), self._sweep)


_SWEEPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, IdleSweep] = (
    weakref.WeakKeyDictionary()
)


def idle_sweep(loop: asyncio.AbstractEventLoop) -> IdleSweep:
    """The sweep of ``loop``, made on first use (each worker process, each test server's loop its own)."""
    sweep = _SWEEPS.get(loop)
    if sweep is None:
        sweep = _SWEEPS[loop] = IdleSweep(loop)
    return sweep
