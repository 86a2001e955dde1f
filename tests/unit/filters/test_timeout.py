"""`--request-timeout` as kube's WithRequestDeadline and WithTimeoutForNonLongRunningRequests apply it
(k8s.io/apiserver pkg/server/filters/timeout.go, request_deadline.go): 504 with kube's Timeout Status, the
handler left to finish (a write it commits stays committed, its late answer dropped), ``?timeout=`` honoured
when shorter and refused in kube's words when malformed, long-running requests untouched and told
``--min-request-timeout``."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.endpoints.http import (
    SCOPE_MIN_REQUEST_TIMEOUT,
    Receive,
    Scope,
    Send,
    respond_json,
)
from apiserver.filters.pipeline import Pipeline
from apiserver.filters.requestinfo import RequestInfoFilter
from apiserver.filters.timeout import TIMEOUT_MESSAGE, TimeoutFilter
from apiserver.machinery.goduration import parse_go_duration
from apiserver.server.options import ChainOptions
from tests.unit.filters.support import request

COLLECTION = "/api/v1/namespaces/default/configmaps"


class SlowWrite:
    """A handler that commits after ``seconds`` and then answers 201, recording both."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.committed = False
        self.scopes: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scopes.append(scope)
        await asyncio.sleep(self.seconds)
        self.committed = True
        await respond_json(send, 201, {"kind": "ConfigMap"})


def chain(app: SlowWrite, timeout: float, min_request_timeout: float = 1800.0) -> Pipeline:
    return Pipeline([RequestInfoFilter(), TimeoutFilter(timeout, min_request_timeout)], app)


def test_a_request_past_its_deadline_gets_kubes_504_and_the_write_still_commits() -> None:
    write = SlowWrite(0.3)
    response = request(chain(write, 0.05), "POST", COLLECTION)
    assert response.status_code == 504
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": TIMEOUT_MESSAGE,
        "reason": "Timeout",
        "code": 504,
    }
    assert TIMEOUT_MESSAGE == "Timeout: request did not complete within the allotted timeout"
    assert write.committed  # not cancelled: the handler ran to its end, its 201 dropped


def test_a_request_within_its_deadline_is_answered_by_its_handler() -> None:
    assert request(chain(SlowWrite(0.01), 5), "POST", COLLECTION).status_code == 201


def test_a_shorter_timeout_parameter_applies_and_a_longer_one_is_capped() -> None:
    assert request(chain(SlowWrite(0.2), 5), "GET", f"{COLLECTION}?timeout=50ms").status_code == 504
    assert (
        request(chain(SlowWrite(0.2), 0.05), "GET", f"{COLLECTION}?timeout=1h").status_code == 504
    )
    # 0s is "no timeout of the user's own": the server's applies
    assert request(chain(SlowWrite(0.01), 5), "GET", f"{COLLECTION}?timeout=0s").status_code == 201


def test_a_malformed_timeout_parameter_is_a_400_in_kubes_words() -> None:
    response = request(chain(SlowWrite(0), 5), "GET", f"{COLLECTION}?timeout=10")
    assert response.status_code == 400
    assert response.json()["message"] == (
        'invalid timeout specified in the request URL - time: missing unit in duration "10"'
    )


def test_a_watch_is_not_timed_out_and_learns_the_min_request_timeout() -> None:
    write = SlowWrite(0.2)
    response = request(chain(write, 0.05, 7), "GET", f"{COLLECTION}?watch=1")
    assert response.status_code == 201
    assert write.scopes[0][SCOPE_MIN_REQUEST_TIMEOUT] == 7


def test_a_zero_request_timeout_is_none() -> None:
    assert request(chain(SlowWrite(0.1), 0), "GET", COLLECTION).status_code == 201


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1m0s", 60),
        ("1.5h", 5400),
        ("300ms", 0.3),
        ("-2s", -2),
        ("0", 0),
        ("1h2m3s", 3723),
        (".5s", 0.5),
    ],
)
def test_go_durations_parse_as_time_parse_duration(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "1", "1x", "1.s.", "--1s", "\u0661s"])
def test_what_go_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="time: "):
        parse_go_duration(text)


def test_negative_timeouts_are_refused_in_kubes_words() -> None:
    problems = ChainOptions(request_timeout=-1, min_request_timeout=-1).validate()
    assert problems == [
        "--request-timeout can not be negative value",
        "--min-request-timeout can not be negative value",
    ]
