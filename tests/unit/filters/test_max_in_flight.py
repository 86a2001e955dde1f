"""The in-flight limits (kube's WithMaxInFlightLimit, k8s.io/apiserver pkg/server/filters/maxinflight.go)
under concurrent slow requests: read-only and mutating requests counted apart, the excess answered 429 with
`Retry-After: 1` and kube's text at once, long-running requests and system:masters never refused, 0 no
limit."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from apiserver.authentication.authenticator import request_authenticator
from apiserver.endpoints.http import ASGIApp, Receive, Scope, Send
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.impersonation import ImpersonationFilter
from apiserver.filters.maxinflight import MaxInFlightFilter
from apiserver.filters.pipeline import Pipeline
from apiserver.filters.requestinfo import RequestInfoFilter
from builtin.authentication.impersonation import IMPERSONATION_KINDS
from tests.unit.filters.support import RuleAuthorizer, echo, run

COLLECTION = "/api/v1/namespaces/default/configmaps"


class Gate:
    """An app whose requests wait until the gate opens: slow requests, held in flight on demand."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.waiting = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.waiting += 1
        await self.opened.wait()
        await echo(scope, receive, send)


def chain(app: ASGIApp, read_only: int, mutating: int) -> ASGIApp:
    # impersonation before the limit, as in the chain: `--as` a master is served past the limit
    steps = [
        RequestInfoFilter(),
        AuthenticationFilter(request_authenticator(())),
        ImpersonationFilter(RuleAuthorizer(lambda _: True), IMPERSONATION_KINDS),
        MaxInFlightFilter(read_only, mutating),
    ]
    return Pipeline(steps, app)


async def held(
    client: httpx.AsyncClient, gate: Gate, method: str, count: int
) -> list[asyncio.Task[httpx.Response]]:
    """``count`` requests started and waiting at the gate (so in flight)."""
    before = gate.waiting
    tasks = [asyncio.create_task(client.request(method, COLLECTION)) for _ in range(count)]
    while gate.waiting < before + count:
        await asyncio.sleep(0.001)
    return tasks


def test_read_only_requests_past_the_limit_are_429_at_once() -> None:
    gate = Gate()

    async def exchange(client: httpx.AsyncClient) -> None:
        holding = await held(client, gate, "GET", 2)
        refused = await client.get(COLLECTION)
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["content-type"] == "text/plain; charset=utf-8"
        assert refused.text == "Too many requests, please try again later.\n"
        # mutating requests have their own limit
        writing = await held(client, gate, "POST", 1)
        assert (await client.post(COLLECTION)).status_code == 429
        gate.opened.set()
        assert [(await task).status_code for task in holding + writing] == [200, 200, 200]
        # the slots are free again
        assert (await client.get(COLLECTION)).status_code == 200
        assert (await client.post(COLLECTION)).status_code == 200

    run(chain(gate, 2, 1), exchange)


def test_watches_are_not_counted() -> None:
    gate = Gate()

    async def exchange(client: httpx.AsyncClient) -> None:
        holding = await held(client, gate, "GET", 1)
        watch = asyncio.create_task(client.get(COLLECTION, params={"watch": "true"}))
        while gate.waiting < 2:
            await asyncio.sleep(0.001)
        assert (await client.get(COLLECTION)).status_code == 429
        gate.opened.set()
        assert (await watch).status_code == 200
        assert (await holding[0]).status_code == 200

    run(chain(gate, 1, 1), exchange)


def test_system_masters_are_served_past_the_limit() -> None:
    gate = Gate()

    async def exchange(client: httpx.AsyncClient) -> None:
        holding = await held(client, gate, "GET", 1)
        master = {"Impersonate-User": "root", "Impersonate-Group": "system:masters"}
        served = asyncio.create_task(client.get(COLLECTION, headers=master))
        while gate.waiting < 2:
            await asyncio.sleep(0.001)
        gate.opened.set()
        assert (await served).status_code == 200
        assert (await holding[0]).status_code == 200

    run(chain(gate, 1, 1), exchange)


def test_a_limit_of_zero_is_no_limit() -> None:
    gate = Gate()

    async def exchange(client: httpx.AsyncClient) -> None:
        holding = await held(client, gate, "GET", 20)
        holding += await held(client, gate, "POST", 1)  # the other limit still holds
        assert (await client.post(COLLECTION)).status_code == 429
        gate.opened.set()
        assert {(await task).status_code for task in holding} == {200}

    run(chain(gate, 0, 1), exchange)


def test_a_request_that_fails_frees_its_slot() -> None:
    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("a bug")

    limiter = MaxInFlightFilter(1, 1)
    app = Pipeline(
        [RequestInfoFilter(), AuthenticationFilter(request_authenticator(())), limiter], failing
    )

    async def exchange(client: httpx.AsyncClient) -> None:
        for _ in range(3):
            with pytest.raises(RuntimeError):
                await client.get(COLLECTION)
        assert limiter.in_flight == [0, 0]

    run(app, exchange)
