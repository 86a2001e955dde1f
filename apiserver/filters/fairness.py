"""API Priority and Fairness in its essentials (kube's WithPriorityAndFairness, k8s.io/apiserver
pkg/server/filters/priority-and-fairness.go), kube-apiserver's default in-flight limit: a request is classified
to a priority level and a flow by kube's bootstrap FlowSchemas (filters/flowschemas.py), takes its estimated width in seats of that level while
it executes, and otherwise waits its turn in the level's fair queues (filters/queueset.py) or is answered 429.
``system:masters`` and the health probes are exempt: never counted, never queued. Long-running requests
(watches, proxies) are not counted, as before their start kube counts a watch only while it initializes.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import SCOPE_USER
from apiserver.endpoints.replay import Replay
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.flowschemas import bootstrap
from apiserver.filters.maxinflight import too_many_requests
from apiserver.filters.pipeline import Exchange
from apiserver.filters.queueset import QueueSet

OBJECTS_PER_SEAT = 100
MAXIMUM_SEATS = 10
"""kube's WorkEstimatorConfig defaults (pkg/util/flowcontrol/request/config.go): a LIST takes a seat per 100
objects it goes through, at most 10."""

_REMEMBERED = 4096
_Classified = tuple[UserInfo, QueueSet | None, str]
"""A user (kept alive, as its id is the key), the queues of its request's level (None: exempt), its flow."""

StoredCount = Callable[[str, str], int]
"""How many objects of (group, resource) are stored: what a LIST from the watch cache goes through."""


class PriorityAndFairnessFilter:
    """The levels' queue sets, made once; a request's classification and width are a few dictionary and
    attribute reads."""

    def __init__(self, server_limit: int, wait_limit: float, stored: StoredCount) -> None:
        self.stored = stored
        self.classifier = bootstrap()
        seats = self.classifier.nominal_seats(server_limit)
        self.levels = {
            level.name: QueueSet(
                seats[level.name],
                level.queues,
                level.hand_size,
                level.queue_length_limit,
                wait_limit,
            )
            for level in self.classifier.levels
        }
        self._known: dict[tuple[int, RequestInfo], _Classified] = {}
        """Each (user, request info)'s classification: a client repeats a few kinds of request."""

    def before(self, exchange: Exchange) -> Awaitable[bool] | None:
        info = exchange.info
        assert info is not None
        if exchange.long_running:
            return None
        user = exchange.scope[SCOPE_USER]
        known = self._known.get((id(user), info))
        if known is None or known[0] is not user:
            known = self._classify(user, info)
        queues, flow = known[1], known[2]
        if queues is None:  # exempt
            return None
        width = self.width(info) if info.verb == "list" else 1
        if queues.try_start(width):
            exchange.held[self] = (queues, None, width)
            return None
        return self._wait(exchange, queues, flow, width)

    def _classify(self, user: UserInfo, info: RequestInfo) -> _Classified:
        """The request's level's queues (None: exempt) and its flow, kept for the same user object (the
        authenticator's, kept across a client's requests) and request info."""
        classified = self.classifier.classify(user, info)
        level_queues, flow = (
            (None, "") if classified is None else (self.levels[classified[0].name], classified[1])
        )
        if len(self._known) >= _REMEMBERED:
            self._known.clear()
        known = self._known[(id(user), info)] = (user, level_queues, flow)
        return known

    async def _wait(self, exchange: Exchange, queues: QueueSet, flow: str, width: int) -> bool:
        """Wait for the seats in a queue of the flow's hand, or be answered 429."""
        queue = await queues.wait(flow, width)
        if queue is None:
            await too_many_requests(exchange.send)
            return False
        exchange.held[self] = (queues, queue, width)
        return True

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """A replay runs within one turn of the loop: it takes its seats and gives them back at once, so
        it needs them free and nobody waiting before it (``try_start``). An exempt request needs none."""
        held = exchange.held.get(self)
        if held is None:
            if exchange.long_running:
                replay.refuse()
            return
        queues, _, width = held

        def seats_free() -> bool:
            if not queues.try_start(width):
                return False
            queues.release(None, width)
            return True

        replay.check(seats_free)

    def after(self, exchange: Exchange, error: BaseException | None) -> None:
        held = exchange.held.get(self)
        if held is not None:
            queues, queue, width = held
            queues.release(queue, width)

    def width(self, info: RequestInfo) -> int:
        """kube's list work estimator (pkg/util/flowcontrol/request/list_work_estimator.go) for a LIST served
        from the watch cache: a seat per 100 of the resource's stored objects, 1 to 10; any other request 1."""
        if info.verb != "list":
            return 1
        stored = self.stored(info.api_group, info.resource)
        return max(1, min(MAXIMUM_SEATS, math.ceil(stored / OBJECTS_PER_SEAT)))
