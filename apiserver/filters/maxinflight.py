"""`--max-requests-inflight` and `--max-mutating-requests-inflight` (kube's WithMaxInFlightLimit): a server
past its limit answers at once with 429 and `Retry-After: 1`, which clients honour by retrying, instead of
queueing work it cannot keep up with. Long-running requests are not counted; a limit of 0 is no limit;
``system:masters`` are always served (a super-user, or the server's own loopback client)."""

from __future__ import annotations

from collections.abc import Awaitable

from apiserver.authentication.user import MASTERS_GROUP, UserInfo
from apiserver.endpoints.http import SCOPE_USER, Send, respond
from apiserver.endpoints.replay import Replay
from apiserver.filters.pipeline import Exchange, answered

_READ_ONLY_VERBS = frozenset(("get", "list", "watch"))
# kube answers with http.Error, not a Status: plain text, and client-go turns any 429 into TooManyRequests
# (k8s.io/apiserver pkg/server/filters/maxinflight.go, tooManyRequests)
_TOO_MANY = b"Too many requests, please try again later.\n"
_TOO_MANY_HEADERS = [(b"retry-after", b"1"), (b"x-content-type-options", b"nosniff")]
_TEXT = b"text/plain; charset=utf-8"


async def too_many_requests(send: Send) -> None:
    """kube's answer to a request refused for load, by this filter and by priority and fairness alike."""
    await respond(send, 429, _TOO_MANY, _TEXT, headers=_TOO_MANY_HEADERS)


class MaxInFlightFilter:
    """Counts the requests being served, read-only and mutating apart. One event loop runs them all, so a
    counter needs no lock."""

    def __init__(self, max_read_only: int, max_mutating: int) -> None:
        self.limits = (max_read_only, max_mutating)
        self.in_flight = [0, 0]

    def before(self, exchange: Exchange) -> Awaitable[bool] | None:
        info = exchange.info
        assert info is not None
        kind = 0 if info.verb in _READ_ONLY_VERBS else 1
        limit = self.limits[kind]
        if not limit or exchange.long_running:
            return None
        if self.in_flight[kind] >= limit:
            if _privileged(exchange.scope[SCOPE_USER]):  # served, and not counted, as kube does
                return None
            return answered(too_many_requests(exchange.send))
        self.in_flight[kind] += 1
        exchange.held[self] = kind
        return None

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """A counted request is replayed only below its limit (it is done within the turn that read it);
        one that was not counted (no limit, or a privileged user past it) is not limited."""
        kind = exchange.held.get(self)
        if kind is not None:
            in_flight, limit = self.in_flight, self.limits[kind]
            replay.check(lambda: in_flight[kind] < limit)

    def after(self, exchange: Exchange, error: BaseException | None) -> None:
        kind = exchange.held.get(self)
        if kind is not None:
            self.in_flight[kind] -= 1


def _privileged(user: UserInfo) -> bool:
    return MASTERS_GROUP in user.groups
