"""Fair queuing for one priority level, in the essentials of kube's queueset
(k8s.io/apiserver pkg/util/flowcontrol/fairqueuing/queueset): a level has a number of seats; a request takes
as many as its estimated width while it executes; one that cannot start at once waits in a queue chosen by
shuffle sharding (its flow is dealt a hand of queues and joins the shortest), and freed seats go to the head
that would finish first in virtual time: its queue's service so far, in seats, plus its own. Virtual time
advances with each dispatch by its seats shared among the queues waiting, and a queue that starts waiting
starts there (no credit for idle time), so that a flow flooding its own queues with wide requests delays
another flow's narrow one by about one request, not by a turn of every queue of its hand. A request finds its
queue full (429 at once) or waits at most the wait limit (429 then). A request that starts at once is counted
against the level only: the queues count the seats of the requests that waited in them.

Everything runs on the server's one event loop: no locks, and no task or timer for a request that starts at
once (the common case); only a waiting request has a future and a timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from dataclasses import dataclass, field

from apiserver.endpoints.http import CONTENTION

_HANDS_REMEMBERED = 4096
"""Flows whose hand of queues is kept rather than dealt again (a flow is a user: there are few)."""


@dataclass(eq=False)
class _Waiter:
    width: int
    queue: _Queue
    granted: asyncio.Future[None]


@dataclass(eq=False)
class _Queue:
    waiting: deque[_Waiter] = field(default_factory=deque)
    waiting_seats: int = 0
    executing_seats: int = 0
    served: float = 0.0
    """The virtual time its next request starts at: where it started waiting, plus the seats dispatched
    from it since (kube's ``nextDispatchR``)."""


class QueueSet:
    """The seats and queues of one priority level. ``queues`` 0 means kube's ``Reject`` limit response: a
    request that cannot start at once is refused."""

    def __init__(
        self, seats: int, queues: int, hand_size: int, queue_length_limit: int, wait_limit: float
    ) -> None:
        self.seats = max(seats, 1)
        self.queues = [_Queue() for _ in range(queues)]
        self.hand_size = min(hand_size, queues)
        self.queue_length_limit = queue_length_limit
        self.wait_limit = wait_limit
        self.seats_in_use = 0
        self.waiting = 0
        self._turn = 0  # where the search for the next queue starts: ties are served in turn
        self._virtual = (
            0.0  # kube's R: each dispatch advances it by its seats shared by the queues waiting
        )
        self._hands: dict[str, tuple[int, ...]] = {}

    def try_start(self, width: int) -> bool:
        """Take the seats at once when nobody waits and they are free: the common case, no queue chosen."""
        if self.waiting or self.seats_in_use + min(width, self.seats) > self.seats:
            return False
        self.seats_in_use += min(width, self.seats)
        return True

    async def wait(self, flow: str, width: int) -> _Queue | None:
        """Wait in a queue of ``flow``'s hand for the seats (after ``try_start`` failed): the queue the seats
        count against once it may execute, or None when it is refused (no queues, a full queue, or the wait
        limit). A request wider than the level runs alone, as kube lets it."""
        width = min(width, self.seats)
        if not self.queues:
            return None
        queue = self._choose(flow)
        if len(queue.waiting) >= self.queue_length_limit:
            return None
        waiter = _Waiter(width, queue, asyncio.get_running_loop().create_future())
        if not queue.waiting:  # no credit for the time it waited for nothing
            queue.served = max(queue.served, self._virtual)
        queue.waiting.append(waiter)
        queue.waiting_seats += width
        self.waiting += 1
        CONTENTION.waiting += 1  # large bodies meanwhile leave in pieces (endpoints/http.py)
        try:
            await asyncio.wait_for(asyncio.shield(waiter.granted), self.wait_limit)
        except TimeoutError:
            if waiter.granted.done():  # granted as the wait ran out: it may still execute
                return queue
            self._forget(waiter)
            return None
        except asyncio.CancelledError:  # the client went away while it waited
            if waiter.granted.done():
                self.release(queue, width)
            else:
                self._forget(waiter)
            raise
        return queue

    def release(self, queue: _Queue | None, width: int) -> None:
        """A request that held ``width`` seats (against ``queue`` if it waited in one) is done: its seats go
        to the waiting."""
        width = min(width, self.seats)
        self.seats_in_use -= width
        if queue is not None:
            queue.executing_seats -= width
        if self.waiting:
            self._dispatch()

    def _start(self, queue: _Queue, width: int) -> None:
        self.seats_in_use += width
        queue.executing_seats += width

    def _forget(self, waiter: _Waiter) -> None:
        waiter.queue.waiting.remove(waiter)
        waiter.queue.waiting_seats -= waiter.width
        self.waiting -= 1
        CONTENTION.waiting -= 1
        if self.waiting:
            self._dispatch()  # the head it left may fit where it did not

    def _dispatch(self) -> None:
        """Start waiting requests while seats allow, first the head that would finish first in virtual
        time, ties in turn (kube's queueset.go, findDispatchQueueToBoundLocked: the least ``nextDispatchR``
        plus the head's work); a head that does not fit stops the dispatch until more seats are free (kube
        waits likewise, so a wide request is not starved by narrow ones behind it)."""
        count = len(self.queues)
        while self.waiting:
            waiting = [
                index
                for offset in range(count)
                if self.queues[index := (self._turn + offset) % count].waiting
            ]
            index = min(waiting, key=self._virtual_finish)
            queue = self.queues[index]
            head = queue.waiting[0]
            if self.seats_in_use + head.width > self.seats and self.seats_in_use:
                return
            queue.waiting.popleft()
            queue.waiting_seats -= head.width
            self.waiting -= 1
            CONTENTION.waiting -= 1
            self._turn = (index + 1) % count
            self._virtual += head.width / len(waiting)
            queue.served += head.width
            self._start(queue, head.width)
            head.granted.set_result(None)

    def _virtual_finish(self, index: int) -> float:
        """Where the queue's head would finish: its queue's service and its own seats."""
        queue = self.queues[index]
        return queue.served + queue.waiting[0].width

    def _choose(self, flow: str) -> _Queue:
        """The shortest queue (waiting and executing seats) of the hand dealt to ``flow``."""
        hand = self._hands.get(flow)
        if hand is None:
            if len(self._hands) >= _HANDS_REMEMBERED:
                self._hands.clear()
            hand = self._hands[flow] = _deal(flow, len(self.queues), self.hand_size)
        return min(
            (self.queues[index] for index in hand),
            key=lambda queue: queue.waiting_seats + queue.executing_seats,
        )


def _deal(flow: str, deck: int, hand_size: int) -> tuple[int, ...]:
    """``hand_size`` distinct queues of ``deck`` from the flow's hash, as kube's shufflesharding.Dealer deals
    them: the hash read as mixed-radix digits, each picking one of the cards left."""
    value = int.from_bytes(hashlib.blake2b(flow.encode(), digest_size=8).digest(), "big")
    cards = list(range(deck))
    hand = []
    for remaining in range(deck, deck - hand_size, -1):
        value, pick = divmod(value, remaining)
        hand.append(cards.pop(pick))
    return tuple(hand)
