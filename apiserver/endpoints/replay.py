"""Replaying an unchanged answer: a GET that a client repeats on its kept-alive connection, with the same
request line and headers, is answered with the bytes the full path answered it with last time, as long as
nothing that decided that answer has changed since.

A controller or a script that polls one object sends the same request over and over; kube answers each with
the whole chain (authentication, priority and fairness, authorization, the handler, the encoder). Here the
first answer is served that way, and while it is served every filter and the handler say what their part of
the answer depends on (``check``): the credentials' verdict, the authorizer's revision, free seats, the
object's cached rendering, the served API. The connection keeps the answer with those checks. The next
identical request runs the checks and, if they all hold, gets the same status, headers and body with a new
``Audit-Id`` and the current ``Date``; what the filters must still do for every request (the metrics' count
and latency) runs as ``record``. A step that cannot vouch for its part (an audited request, a token a webhook
judged, an impersonation) calls ``refuse``, and the request is never replayed.

Only a 200 with a known length, sent whole, is kept, and only for a handler that said what its answer depends
on (``depends_on_handler``): every other answer, every other method, goes the full way each time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SCOPE_REPLAY = "apiforge.replay"
"""The request's ``Replay`` on the ASGI scope, when the connection may replay its answer."""

MAX_REPLAYED_BODY = 16 * 1024
"""The largest body a connection keeps for a replay: a connection pins at most a few of them."""

Check = Callable[[], bool]
Record = Callable[[float], None]
"""Runs after a replay is written, with the ``time.perf_counter()`` at which it began."""


class Replay:
    """One request's answer as it is being served, and what it depends on; once ``complete``, what the
    connection replays."""

    __slots__ = ("body", "checks", "handled", "headers", "ready", "records", "refused", "wire")

    def __init__(self) -> None:
        self.checks: list[Check] = []
        self.records: list[Record] = []
        self.refused = False
        self.handled = False
        self.headers: list[tuple[bytes, bytes]] | None = None
        """The response's own headers (the ASGI start message's), before the Audit-Id."""
        self.body: bytes | None = None
        self.ready = False
        self.wire = b""
        """``headers`` as the connection writes them, once it has (its own business)."""
        """Set once the request is done and every step vouched for its part: it may be replayed."""

    def check(self, check: Check) -> None:
        """What must still hold for the answer to be replayed."""
        self.checks.append(check)

    def record(self, record: Record) -> None:
        """What each replay must still do once it is written."""
        self.records.append(record)

    def refuse(self) -> None:
        """This answer is not to be replayed."""
        self.refused = True

    def depends_on_handler(self, check: Check | None) -> None:
        """The handler's part: ``check`` says whether its answer would still be the same (None: it cannot
        tell)."""
        if check is None:
            self.refused = True
        else:
            self.handled = True
            self.checks.append(check)

    def see(self, message: Any) -> None:
        """A message of the response, as the handler sent it."""
        if self.refused:
            return
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            if message["status"] != 200 or not any(
                name == b"content-length" for name, _ in headers
            ):
                self.refused = True
            self.headers = headers
            return
        body = message.get("body", b"")
        if (
            message.get("more_body", False)
            or self.body is not None
            or len(body) > MAX_REPLAYED_BODY
        ):
            self.refused = True
        else:
            self.body = bytes(body)

    @property
    def complete(self) -> bool:
        """Whether the whole answer was seen and every part of it vouched for so far."""
        return (
            not self.refused and self.handled and self.headers is not None and self.body is not None
        )

    def holds(self) -> bool:
        """Every check, in order; the first that fails ends it."""
        return all(check() for check in self.checks)

    def recorded(self, started: float) -> None:
        for record in self.records:
            record(started)
