"""How much of a turn of the event loop TLS handshakes may take, and which waiting handshake goes first.

A new connection's first handshake step (the server's answer to its ClientHello: key exchange, the signed
certificate; ~0.3 ms of CPU on a quiet machine, 1-1.5 ms at a load of 3-5 on 2 cores) runs on the event loop.
When hundreds of connections arrive at once, all their ClientHellos are read in one turn, and that turn did
nothing else for 250-300 ms (measured: 247 handshakes in one 305 ms turn): every request already parsed,
every response being written and every handshake behind them waited for all of it. kube-apiserver's Go server
does each handshake in its connection's goroutine, across every core, beside the requests in flight.

So a turn spends at most ``BUDGET`` seconds on first steps; the ClientHellos beyond it wait for the next
turns, which also serve everything else. The waiting ones go by the time their connection was made, the latest
first. A burst's connections are made together (every waiting connection is accepted at once: accept.py),
while their ClientHellos come in over the next few hundred milliseconds, as fast as the flooding client writes
them; so a `/readyz` probe or an admin that connects after the burst is answered in the next turn instead of
after the whole burst (measured: a probe's first step waited 270-480 ms in the order ClientHellos came, 0-4
ms this way). The burst's connections are no later in total: the same work, in another order. This is the
"adaptive LIFO" of Facebook's servers (Fail at Scale, ACM Queue 13(8), 2015), and what Go's scheduler does
for a new goroutine (``runnext``: it runs before those already queued). When none wait, a handshake starts at
once, as before.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable

BUDGET = 0.005
"""Seconds of first handshake steps per turn of the loop: a few handshakes at a time at load. A turn that
finds handshakes waiting runs at least one, whatever the budget."""


class HandshakeGate:
    """One per server loop: runs a connection's first handshake step at once while the turn's budget lasts,
    else keeps it for the next turns, the connection made last first."""

    def __init__(self, budget: float = BUDGET) -> None:
        self.budget = budget
        self._spent = 0.0
        self._waiting: list[tuple[float, int, Callable[[], None]]] = []
        """A heap: the connection made last first; of those made at once, the one that asked last."""
        self._order = itertools.count()
        self._turn_ends: asyncio.Handle | None = None

    def admit(self, step: Callable[[], None], connected: float) -> bool:
        """Run ``step`` (the first handshake step of a connection made at ``connected``, loop time) now
        (True) or in a later turn (False)."""
        self._until_turn_ends()
        if self._spent >= self.budget:
            heapq.heappush(self._waiting, (-connected, -next(self._order), step))
            return False
        self._run(step)
        return True

    def _until_turn_ends(self) -> None:
        """The budget is the turn's: the callback that ends it comes after this turn's reads."""
        if self._turn_ends is None:
            self._turn_ends = asyncio.get_running_loop().call_soon(self._next_turn)

    def _run(self, step: Callable[[], None]) -> None:
        started = time.perf_counter()
        try:
            step()
        finally:
            self._spent += time.perf_counter() - started

    def _next_turn(self) -> None:
        self._turn_ends = None
        self._spent = 0.0
        waiting = self._waiting
        if not waiting:
            return
        self._until_turn_ends()  # first: a step that raises leaves the rest to the next turn
        self._run(heapq.heappop(waiting)[2])
        while waiting and self._spent < self.budget:
            self._run(heapq.heappop(waiting)[2])
