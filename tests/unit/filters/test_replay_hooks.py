"""What each filter vouches for when an answer is kept for replay (apiserver/endpoints/replay.py): a kept
answer is ready only when every step and the handler vouched, and its checks fail as soon as a seat, the
in-flight count, the authorizer's revision or the handler's own condition no longer holds."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
import pytest

from apiserver.authentication.authenticator import request_authenticator, vouch_stable
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes, Decision, Rules
from apiserver.endpoints.http import Receive, Scope, Send, respond
from apiserver.endpoints.replay import MAX_REPLAYED_BODY, SCOPE_REPLAY, Replay
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.authorization import AuthorizationFilter
from apiserver.filters.fairness import PriorityAndFairnessFilter
from apiserver.filters.maxinflight import MaxInFlightFilter
from apiserver.filters.pipeline import Pipeline, Step
from apiserver.filters.requestinfo import RequestInfoFilter
from tests.unit.filters.support import TokenFile, run

PATH = "/api/v1/namespaces/default/configmaps/polled"
JANE = UserInfo("jane", groups=("system:authenticated",))


class Revisioned:
    """Allows everything; its revision is what the test sets."""

    def __init__(self) -> None:
        self.current: object | None = 1

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        return Decision.ALLOW, ""

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()

    def revision(self) -> object | None:
        return self.current


class Handler:
    """Answers 200 and vouches with ``still`` (None: cannot), or answers ``status``."""

    def __init__(self, body: bytes = b'{"kind":"ConfigMap"}', status: int = 200) -> None:
        self.body = body
        self.status = status
        self.holds = True
        self.still: Callable[[], bool] | None = lambda: self.holds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[SCOPE_REPLAY].depends_on_handler(self.still)
        await respond(send, self.status, self.body)


def kept_after(
    steps: Sequence[Step], handler: Handler, headers: dict[str, str] | None = None
) -> Replay:
    """The Replay of one GET through ``steps`` then ``handler``, as the connection offers it."""
    pipeline = Pipeline(steps, handler)
    replay = Replay()

    async def offered(scope: Scope, receive: Receive, send: Send) -> None:
        scope[SCOPE_REPLAY] = replay
        await pipeline(scope, receive, send)

    async def get(client: httpx.AsyncClient) -> httpx.Response:
        return await client.get(PATH, headers=headers)

    run(offered, get)
    return replay


def authenticated(authorizer: object | None = None) -> list[Step]:
    """Request info, anonymous authentication (which vouches) and, given, authorization."""
    steps: list[Step] = [RequestInfoFilter(), AuthenticationFilter(request_authenticator(()))]
    if authorizer is not None:
        steps.append(AuthorizationFilter(authorizer))  # type: ignore[arg-type]
    return steps


def test_an_answer_every_step_vouched_for_is_ready_and_holds_while_the_handler_says_so() -> None:
    handler = Handler()
    replay = kept_after(authenticated(Revisioned()), handler)
    assert replay.ready and replay.holds()
    assert replay.body == handler.body
    handler.holds = False
    assert not replay.holds()


def test_a_handler_that_cannot_vouch_or_an_answer_other_than_200_is_not_kept() -> None:
    cannot = Handler()
    cannot.still = None
    assert not kept_after(authenticated(), cannot).ready
    assert not kept_after(authenticated(), Handler(status=404)).ready
    assert not kept_after(authenticated(), Handler(body=b"x" * (MAX_REPLAYED_BODY + 1))).ready


def test_a_step_without_a_replay_hook_keeps_nothing() -> None:
    class Opaque:
        def before(self, exchange: object) -> None:
            return None

    assert not kept_after([*authenticated(), Opaque()], Handler()).ready


def test_the_authorizer_s_revision_decides_and_one_without_revisions_is_asked_every_time() -> None:
    authorizer = Revisioned()
    replay = kept_after(authenticated(authorizer), Handler())
    assert replay.holds()
    authorizer.current = 2
    assert not replay.holds()
    authorizer.current = None
    assert not kept_after(authenticated(authorizer), Handler()).ready

    class Plain:
        async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
            return Decision.ALLOW, ""

    assert not kept_after(authenticated(Plain()), Handler()).ready


def test_credentials_an_authenticator_did_not_vouch_for_are_not_kept() -> None:
    """A token table of the tests' own is not known to be static; the anonymous fallback is."""
    tokens = TokenFile({"t": JANE})
    steps: list[Step] = [RequestInfoFilter(), AuthenticationFilter(request_authenticator([tokens]))]
    assert not kept_after(steps, Handler(), {"authorization": "Bearer t"}).ready
    assert kept_after(steps, Handler()).ready  # no token: anonymous


class Vouching:
    """Authenticates by ``tokens`` and vouches for the verdict until ``until``."""

    def __init__(self, tokens: TokenFile, until: float = math.inf) -> None:
        self.tokens = tokens
        self.until = until

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        user = await self.tokens.authenticate(scope)
        vouch_stable(scope, self.until)
        return user


def test_credentials_vouched_for_until_a_time_are_replayed_until_then() -> None:
    """A client certificate's verdict holds until the end of its validity (x509.py)."""
    tokens = TokenFile({"t": JANE})
    for until, holds in ((time.time() + 3600, True), (time.time() - 1, False)):
        steps: list[Step] = [RequestInfoFilter(), AuthenticationFilter(Vouching(tokens, until))]
        replay = kept_after(steps, Handler(), {"authorization": "Bearer t"})
        assert replay.ready and replay.holds() is holds


def test_a_replay_needs_an_in_flight_slot_below_the_limit() -> None:
    limit = MaxInFlightFilter(1, 1)
    replay = kept_after([*authenticated(), limit], Handler())
    assert replay.ready and replay.holds()
    limit.in_flight[0] = 1  # another read is being served
    assert not replay.holds()
    limit.in_flight[0] = 0
    assert replay.holds()


@pytest.mark.parametrize("waiting", [False, True], ids=["seats-taken", "a-request-waits"])
def test_a_replay_needs_free_seats_and_nobody_waiting_in_its_priority_level(waiting: bool) -> None:
    fairness = PriorityAndFairnessFilter(4, 1.0, lambda _group, _resource: 0)
    tokens = TokenFile({"t": JANE})

    steps: list[Step] = [RequestInfoFilter(), AuthenticationFilter(Vouching(tokens)), fairness]
    replay = kept_after(steps, Handler(), {"authorization": "Bearer t"})
    assert replay.ready and replay.holds()
    level = fairness.levels["global-default"]
    assert level.seats_in_use == 0  # the check gave back what it took
    if waiting:
        level.waiting = 1
    else:
        while level.try_start(1):
            pass
    assert not replay.holds()


def test_what_a_replay_records_runs_with_its_start() -> None:
    seen: list[float] = []
    replay = Replay()
    replay.record(seen.append)
    replay.recorded(1.5)
    assert seen == [1.5]
