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
The deadline is one timer per request; no task is created unless it fires.
"""

from __future__ import annotations

import asyncio
import logging

from apiserver.endpoints.http import (
    SCOPE_MIN_REQUEST_TIMEOUT,
    SCOPE_REQUEST_INFO,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    parse_query,
    respond_error,
)
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.longrunning import is_long_running
from apiserver.machinery.errors import APIError, bad_request
from apiserver.machinery.goduration import parse_go_duration

log = logging.getLogger(__name__)

# apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0): reason Timeout, 504
TIMEOUT_MESSAGE = "Timeout: request did not complete within the allotted timeout"
_INVALID_TIMEOUT = "invalid timeout specified in the request URL"


class TimeoutFilter:
    """The deadline of each non-long-running request, in seconds (0: none)."""

    def __init__(self, app: ASGIApp, request_timeout: float, min_request_timeout: float) -> None:
        self.app = app
        self.request_timeout = request_timeout
        self.min_request_timeout = min_request_timeout
        self._late: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        info: RequestInfo = scope[SCOPE_REQUEST_INFO]
        if is_long_running(info):
            scope[SCOPE_MIN_REQUEST_TIMEOUT] = self.min_request_timeout
            await self.app(scope, receive, send)
            return
        try:
            timeout = self._deadline(scope.get("query_string", b""))
        except APIError as error:
            await respond_error(send, error)
            return
        if not timeout:
            await self.app(scope, receive, send)
            return
        response = _Response(send)
        timer = asyncio.get_running_loop().call_later(timeout, self._expire, response, scope)
        try:
            await self.app(scope, receive, response.send)
        finally:
            timer.cancel()
            if response.expired:
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

    def _expire(self, response: _Response, scope: Scope) -> None:
        if response.started:
            return
        response.expired = True
        task = asyncio.get_running_loop().create_task(response.answer_timeout(scope))
        self._late.add(task)
        task.add_done_callback(self._late.discard)


class _Response:
    """The handler's ``send``, until the deadline answers in its place; afterwards its messages are
    dropped, as Go's timeoutWriter drops writes after the timeout."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.expired = False

    async def send(self, message: Message) -> None:
        if self.expired:
            return
        self.started = True
        await self._send(message)

    async def answer_timeout(self, scope: Scope) -> None:
        accept = next((v for k, v in scope["headers"] if k == b"accept"), b"").decode("latin-1")
        await respond_error(self._send, APIError(504, "Timeout", TIMEOUT_MESSAGE), accept=accept)
