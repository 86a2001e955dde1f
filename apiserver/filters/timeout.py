"""`--request-timeout` for non-long-running requests, as kube's WithRequestDeadline and
WithTimeoutForNonLongRunningRequests do it together (k8s.io/apiserver pkg/server/filters/timeout.go,
request_deadline.go): the deadline is ``--request-timeout``, or the request's ``?timeout=`` (a Go duration)
when shorter and positive; a malformed one is a 400; a request still unanswered at its deadline is answered 504
with kube's Timeout Status. Long-running requests (watches, proxies, streams) pass untouched, and a watch learns
``--min-request-timeout`` for its default lifetime through the scope.

As in kube, the handler is not interrupted: Go's timeout handler lets it run on and discards what it writes
afterwards. So a write that commits after the deadline stays committed (the client, told 504, finds it on its
next read) and nothing is cancelled half-way through storage. A body still arriving at the deadline is
lost to the handler (uvicorn ends ``receive`` with the response, as Go closes the request body), so such a
write fails before it reaches storage. A handler that has already started its response
when the deadline passes finishes it (kube would abort the connection: its client sees an error either way).
One timer serves every request in flight; no task is created unless a deadline passes.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable

from apiserver.audit.event import status_fields
from apiserver.endpoints.http import SCOPE_MIN_REQUEST_TIMEOUT, parse_query, respond_error
from apiserver.endpoints.replay import Replay
from apiserver.filters.audit import Auditor
from apiserver.filters.pipeline import Exchange, answered
from apiserver.machinery.errors import APIError, bad_request
from apiserver.machinery.goduration import parse_go_duration

log = logging.getLogger(__name__)

# apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0): reason Timeout, 504
TIMEOUT_MESSAGE = "Timeout: request did not complete within the allotted timeout"
_SWEEP_SECONDS = 0.25
_INVALID_TIMEOUT = "invalid timeout specified in the request URL"


class TimeoutFilter:
    """The deadline of each non-long-running request, in seconds (0: none)."""

    def __init__(
        self, request_timeout: float, min_request_timeout: float, auditor: Auditor | None = None
    ) -> None:
        self.auditor = auditor
        """Records a malformed ``?timeout=``'s refusal, as kube's withFailedRequestAudit does."""
        self.request_timeout = request_timeout
        self.min_request_timeout = min_request_timeout
        self._pending: dict[Exchange, float] = {}
        """The deadline of each request in flight, on the monotonic clock (``time.monotonic``: read
        without asking for the running loop, whose check costs a system call, getpid, per request)."""
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_at = math.inf
        """When the sweep is due, on the same clock (infinity: none is)."""
        self._late: set[asyncio.Task[None]] = set()

    def before(self, exchange: Exchange) -> Awaitable[bool] | None:
        scope, info = exchange.scope, exchange.info
        assert info is not None
        if exchange.long_running:
            scope[SCOPE_MIN_REQUEST_TIMEOUT] = self.min_request_timeout
            return None
        try:
            timeout = self._deadline(scope.get("query_string", b""))
        except APIError as error:
            if self.auditor is not None:
                self.auditor.failed_request(scope, info, status_fields(error.status()))
            return answered(respond_error(exchange.send, error))
        if timeout:
            deadline = time.monotonic() + timeout
            self._pending[exchange] = deadline
            if deadline < self._sweep_at:
                self._schedule(asyncio.get_running_loop(), deadline)
        return None

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """A replay is answered within the turn of the loop that read it: no deadline can pass."""

    def after(self, exchange: Exchange, error: BaseException | None) -> None:
        if self._pending.pop(exchange, None) is not None and exchange.expired:
            scope = exchange.scope
            log.info("%s %s finished after its 504 was sent", scope["method"], scope["path"])

    def _deadline(self, query_string: bytes) -> float:
        """``--request-timeout``, or the request's ``?timeout=`` when positive and shorter."""
        if b"timeout=" not in query_string:
            return self.request_timeout
        text = parse_query(query_string).get("timeout", "")
        if not text:
            return self.request_timeout
        try:
            asked = parse_go_duration(text)
        except ValueError as error:
            raise bad_request(f"{_INVALID_TIMEOUT} - {error}") from None
        if asked > 0 and (asked < self.request_timeout or not self.request_timeout):
            return asked
        return self.request_timeout

    def _schedule(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        """The sweep at ``when`` (monotonic), as a delay: the loop's own clock may count from elsewhere."""
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep = loop.call_later(max(0.0, when - time.monotonic()), self._expire_due, loop)
        self._sweep_at = when

    def _expire_due(self, loop: asyncio.AbstractEventLoop) -> None:
        """Answer every request past its deadline, then wait for the next deadline, at most one
        ``_SWEEP_SECONDS`` away: one timer for all the requests in flight rather than one each."""
        self._sweep = None
        self._sweep_at = math.inf
        now = time.monotonic()
        upcoming = now + _SWEEP_SECONDS
        for exchange, deadline in self._pending.items():
            if deadline <= now:
                if not exchange.started and not exchange.expired:
                    exchange.expired = True
                    task = loop.create_task(_answer_timeout(exchange))
                    self._late.add(task)
                    task.add_done_callback(self._late.discard)
            else:
                upcoming = min(upcoming, deadline)
        if self._pending:
            self._schedule(loop, upcoming)


async def _answer_timeout(exchange: Exchange) -> None:
    """The 504 in the handler's place, sent as the deadline's step would (outside it)."""
    headers = exchange.scope["headers"]
    accept = next((v for k, v in headers if k == b"accept"), b"").decode("latin-1")
    error = APIError(504, "Timeout", TIMEOUT_MESSAGE)
    await respond_error(exchange.send_outer, error, accept=accept)
