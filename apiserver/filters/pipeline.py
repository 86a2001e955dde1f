"""The filters run as steps of one coroutine per request, in the order given (kube-apiserver's: server/chain.py).

kube's handler chain is nested http.Handlers, each a cheap function call. Nested ASGI apps are not cheap in
Python: each layer costs a coroutine frame, scope lookups and, when it watches the response, a ``send`` wrapper
that runs for every message. Here a filter is a step with a ``before`` hook that decides whether the request
goes on, and an optional ``after`` hook that runs once the request is done (also when it failed or was
cancelled), in reverse order, for every step the request went past. What the steps learn about the request
(its info, user, audit ID, status code...) is kept on one ``Exchange``, whose single ``send`` does what each
layer's wrapper did, in the nesting's order: audit records the message, a request past its deadline drops it,
the metrics see its code and the response's start gets its Audit-Id header.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from apiserver.audit.event import Event
from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import (
    DONE,
    ASGIApp,
    ChunkStream,
    Message,
    Receive,
    Scope,
    Send,
    WholeSend,
    chunk_stream,
    sent_apart,
)
from apiserver.endpoints.replay import SCOPE_REPLAY, Replay
from apiserver.endpoints.routing import RequestInfo


class Recording(Protocol):
    """What the steps use of an audited request's recording (the audit filter's ``Recording``): its event,
    which later steps annotate, and ``see``, which records each message sent."""

    event: Event

    def see(self, message: Message) -> None: ...

    @property
    def sees_chunks(self) -> bool:
        """Whether ``see`` records anything of a stream's chunks (the response's body, or its error)."""
        ...


AUDIT_ID_HEADER = b"audit-id"


class Exchange:
    """One request on its way through the steps: the ASGI scope, ``receive`` and ``send`` the handler gets,
    and what the steps learned. ``send`` is a bound method of this object, which carries the server's
    ``transport`` as uvicorn's own send's object does (``http.transport_of``): the watch writer cuts off a
    client that stopped reading through it. It hands back the server's own awaitable: no coroutine per
    message."""

    __slots__ = (
        "audit_id",
        "code",
        "expired",
        "held",
        "info",
        "long_running",
        "receive",
        "recording",
        "replay",
        "scope",
        "send_to",
        "started",
        "transport",
        "user",
        "whole",
    )

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope = scope
        self.receive = receive
        self.send_to = send
        owner = getattr(send, "__self__", None)  # transport_of and whole_send, in one look
        self.transport = getattr(owner, "transport", None)
        self.whole: WholeSend | None = (
            getattr(owner, "send_whole", None) if getattr(send, "__name__", "") == "send" else None
        )
        """The server's ``send_whole`` under ``send``, when it has one."""
        self.info: RequestInfo | None = None
        self.long_running = False
        """A watch, a proxy or a stream (filters/longrunning.py): no deadline, not counted in flight."""
        self.user: UserInfo | None = None
        self.audit_id = b""
        """Echoed in the Audit-Id header of the response, whichever step answers it."""
        self.code = 500
        """The response's status: what the client sees of a handler that raised before answering."""
        self.started = False
        """Whether the response has begun (past the deadline, it is finished rather than answered 504)."""
        self.expired = False
        """Answered 504 at the deadline: what the handler sends afterwards is dropped, as Go's
        timeoutWriter drops it."""
        self.recording: Recording | None = None
        """The audit event being filled in, when the policy records the request."""
        self.held: dict[object, Any] = {}
        """What a step holds for its ``after`` (seats, an in-flight count), keyed by the step."""
        self.replay: Replay | None = scope.get(SCOPE_REPLAY)
        """The answer as the connection may replay it (endpoints/replay.py), when it may."""

    def send(self, message: Message) -> Awaitable[None]:
        if self.recording is not None:
            self.recording.see(message)
        if self.expired:
            return DONE
        self.started = True
        return self.send_outer(message)

    def send_whole(self, start: Message, body: bytes) -> Awaitable[None]:
        """``send`` of a whole response (``http.respond``), handed on whole to the server's own
        ``send_whole`` when no step needs to see its messages (audit) and it is not dropped. A replay
        sees the two messages as ``send_outer`` shows them (before the Audit-Id), without their trip."""
        whole = self.whole
        if self.recording is not None or self.expired or whole is None:
            return sent_apart(self.send, start, body)
        if self.replay is not None:
            self.replay.see(start)
            self.replay.see({"type": "http.response.body", "body": body})
        self.started = True
        self.code = start["status"]
        if self.audit_id:
            start["headers"].append((AUDIT_ID_HEADER, self.audit_id))
        return whole(start, body)

    def chunk_stream(self) -> ChunkStream | None:
        """The server's stream under ``send`` (``http.chunk_stream``) when no step needs its chunks:
        audit records none of a long-running request's, and a stream past its deadline has none."""
        if self.expired or (self.recording is not None and self.recording.sees_chunks):
            return None
        return chunk_stream(self.send_to)

    def send_outer(self, message: Message) -> Awaitable[None]:
        """``send`` as it is outside the deadline's step: how its 504 leaves."""
        if self.replay is not None:
            self.replay.see(message)
        if message["type"] == "http.response.start":
            self.code = message["status"]
            if self.audit_id:
                headers = [*message.get("headers", ()), (AUDIT_ID_HEADER, self.audit_id)]
                message = {**message, "headers": headers}
        return self.send_to(message)


class Step(Protocol):
    """A filter. ``before`` hands back None when the request goes on at once, or an awaitable that says
    whether it goes on (False: the step has answered it through ``exchange.send``); the steps that need no
    wait for most requests (all but authentication and authorization) create no coroutine for them."""

    def before(self, exchange: Exchange) -> Awaitable[bool] | None: ...


class Replayable(Protocol):
    """A step whose part in an answer may be replayed (endpoints/replay.py): once the request is done, it
    adds what its part depends on to ``replay`` (``check``), what it must do again on a replay
    (``record``), or refuses. A step without this hook makes every answer unreplayable."""

    def replay(self, exchange: Exchange, replay: Replay) -> None: ...


After = Callable[[Exchange, BaseException | None], None]
"""A step's ``after`` hook: the request is done, ``error`` what ended it if it failed."""


class Pipeline:
    """The steps, then ``handler``, as one ASGI app."""

    def __init__(self, steps: Sequence[Step], handler: ASGIApp) -> None:
        self.steps = tuple(steps)
        self.handler = handler
        self._befores = tuple(step.before for step in self.steps)
        self._afters: tuple[tuple[int, After], ...] = tuple(
            (index, after)
            for index, step in reversed(list(enumerate(self.steps)))
            if (after := getattr(step, "after", None)) is not None
        )
        hooks = [getattr(step, "replay", None) for step in self.steps]
        self._replays: tuple[Callable[[Exchange, Replay], None], ...] | None = (
            None if None in hooks else tuple(hooks)  # type: ignore[arg-type]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.not_http(scope, receive, send)
            return
        exchange = Exchange(scope, receive, send)
        passed = 0  # the steps the request went past, whose ``after`` runs
        error: BaseException | None = None
        try:
            for before in self._befores:
                pending = before(exchange)
                if pending is not None and not await pending:
                    return
                passed += 1
            await self.handler(scope, exchange.receive, exchange.send)
            if exchange.replay is not None and exchange.replay.complete:
                self._vouch(exchange, exchange.replay)
        except BaseException as raised:
            error = raised
            raise
        finally:
            for index, after in self._afters:
                if index < passed:
                    after(exchange, error)

    def _vouch(self, exchange: Exchange, replay: Replay) -> None:
        """Every step adds its part to a complete answer; it may be replayed if none refused."""
        if self._replays is None:
            return
        for hook in self._replays:
            hook(exchange, replay)
        replay.ready = not replay.refused

    async def not_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What is not an HTTP request (lifespan) passes no filter."""
        await self.handler(scope, receive, send)


async def answered(response: Awaitable[None]) -> bool:
    """A step's refusal as its ``before`` hands it back: the response sent, the request stops here."""
    await response
    return False
