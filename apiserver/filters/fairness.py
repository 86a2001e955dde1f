"""API Priority and Fairness in its essentials (kube's WithPriorityAndFairness, k8s.io/apiserver
pkg/server/filters/priority-and-fairness.go), kube-apiserver's default in-flight limit: a request is classified
to a priority level and a flow by kube's bootstrap FlowSchemas (filters/flowschemas.py), takes its estimated width in seats of that level while
it executes, and otherwise waits its turn in the level's fair queues (filters/queueset.py) or is answered 429.
``system:masters`` and the health probes are exempt: never counted, never queued. Long-running requests
(watches, proxies) are not counted, as before their start kube counts a watch only while it initializes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from apiserver.endpoints.http import SCOPE_REQUEST_INFO, SCOPE_USER, ASGIApp, Receive, Scope, Send
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.flowschemas import bootstrap
from apiserver.filters.longrunning import is_long_running
from apiserver.filters.maxinflight import too_many_requests
from apiserver.filters.queueset import QueueSet

OBJECTS_PER_SEAT = 100
MAXIMUM_SEATS = 10
"""kube's WorkEstimatorConfig defaults (pkg/util/flowcontrol/request/config.go): a LIST takes a seat per 100
objects it goes through, at most 10."""

StoredCount = Callable[[str, str], int]
"""How many objects of (group, resource) are stored: what a LIST from the watch cache goes through."""


class PriorityAndFairnessFilter:
    """The levels' queue sets, made once; a request's classification and width are a few dictionary and
    attribute reads."""

    def __init__(
        self, app: ASGIApp, server_limit: int, wait_limit: float, stored: StoredCount
    ) -> None:
        self.app = app
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        info: RequestInfo = scope[SCOPE_REQUEST_INFO]
        classified = (
            None if is_long_running(info) else self.classifier.classify(scope[SCOPE_USER], info)
        )
        if classified is None:
            await self.app(scope, receive, send)
            return
        level, flow = classified
        width = self.width(info)
        queues = self.levels[level.name]
        queue = None
        if not queues.try_start(width):
            queue = await queues.wait(flow, width)
            if queue is None:
                await too_many_requests(send)
                return
        try:
            await self.app(scope, receive, send)
        finally:
            queues.release(queue, width)

    def width(self, info: RequestInfo) -> int:
        """kube's list work estimator (pkg/util/flowcontrol/request/list_work_estimator.go) for a LIST served
        from the watch cache: a seat per 100 of the resource's stored objects, 1 to 10; any other request 1."""
        if info.verb != "list":
            return 1
        stored = self.stored(info.api_group, info.resource)
        return max(1, min(MAXIMUM_SEATS, math.ceil(stored / OBJECTS_PER_SEAT)))
