"""Priority and fairness through a real server process: with the server's concurrency limit at 1, the
global-default level has one seat. While an ordinary user holds it, the health probes and system:masters are
served at once (exempt, as kube's `exempt` and `probes` flow schemas), another user's request waits its turn and
is served once the seat frees, and a request that waits past a quarter of --request-timeout is answered kube's
429 with `Retry-After: 1` (k8s.io/apiserver pkg/server/filters/priority-and-fairness.go)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
WAIT_LIMIT = 1.0  # --request-timeout 4s / 4
BIG_LIST_CONFIGMAPS = 12
"""A list of ~11 MB: more than the kernel buffers for a client that reads nothing."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("fairness") / "data",
        free_port(),
        storage="memory",
        extra_args=(
            "--authorization-mode",
            "AlwaysAllow",  # impersonated users hold no bindings; RBAC is not what is tested
            "--max-requests-inflight",
            "1",
            "--max-mutating-requests-inflight",
            "0",
            "--request-timeout",
            "4s",
        ),
    )
    process.start()
    yield process
    process.stop()


@contextmanager
def seat_held(server: ServerProcess, user: str) -> Iterator[threading.Event]:
    """A create by ``user`` whose body is still on its way holds the level's one seat until the yielded
    event is set (then the rest of the body goes and the create must succeed)."""
    body = json.dumps({"metadata": {"name": f"held-{time.monotonic_ns()}"}}).encode()
    head = (
        f"POST {CONFIGMAPS} HTTP/1.1\r\nhost: 127.0.0.1\r\nimpersonate-user: {user}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    release = threading.Event()
    with server.connect(timeout=30) as connection:
        connection.sendall(head + body[:1])
        # the seat is taken once a request of another user has to wait for it
        deadline = time.monotonic() + 20
        while as_user(server, "probe-user", "GET", CONFIGMAPS, timeout=0.3) is not None:
            assert time.monotonic() < deadline, "the held create never took the seat"
        yield release
        release.wait(timeout=30)
        connection.sendall(body[1:])
        assert connection.recv(64).startswith(b"HTTP/1.1 201 ")


def as_user(
    server: ServerProcess, user: str, method: str, path: str, timeout: float = 30
) -> tuple[int, dict[str, str], float] | None:
    """(status, headers, seconds taken) of one request as ``user`` (impersonated by the admin), or None
    when no answer came within ``timeout``."""
    started = time.monotonic()
    try:
        with server.client(timeout=timeout) as client:
            response = client.request(method, path, headers={"Impersonate-User": user})
    except Exception as error:  # httpx's timeouts
        if "timed out" in str(error).lower() or "timeout" in type(error).__name__.lower():
            return None
        raise
    return response.status_code, dict(response.headers), time.monotonic() - started


def test_probes_and_masters_are_served_while_the_seat_is_held(server: ServerProcess) -> None:
    with seat_held(server, "flooder") as release:
        with server.anonymous_client(timeout=5) as anonymous:
            started = time.monotonic()
            assert anonymous.get("/readyz").status_code == 200
            assert anonymous.get("/livez").status_code == 200
        with server.client(timeout=5) as admin:
            assert admin.get(CONFIGMAPS).status_code == 200
        assert time.monotonic() - started < WAIT_LIMIT  # none of them queued
        release.set()


def test_another_user_waits_its_turn_and_is_served(server: ServerProcess) -> None:
    answers: list[tuple[int, dict[str, str], float] | None] = []
    with seat_held(server, "flooder") as release:
        waiting = threading.Thread(
            target=lambda: answers.append(as_user(server, "bystander", "GET", CONFIGMAPS))
        )
        waiting.start()
        time.sleep(0.3)  # it is queued (the seat is held) when the seat frees
        release.set()
    waiting.join(timeout=30)
    assert answers and answers[0] is not None
    status, _headers, seconds = answers[0]
    assert status == 200 and seconds >= 0.3


def test_a_request_waiting_past_the_limit_is_429_with_retry_after(server: ServerProcess) -> None:
    with seat_held(server, "flooder") as release:
        answer = as_user(server, "bystander", "GET", CONFIGMAPS)
        release.set()
    assert answer is not None
    status, headers, seconds = answer
    assert status == 429 and headers["retry-after"] == "1"
    assert seconds >= WAIT_LIMIT * 0.9


def test_a_list_holds_its_seat_until_its_body_is_written(server: ServerProcess) -> None:
    """kube releases a request's seats when its handler returns, after the response is written (Go's Write
    returns once the kernel has the bytes): a large LIST whose client reads nothing keeps its seat, so
    another user's request waits past the limit and is answered 429, and once the LIST has been read the
    seat is free again."""
    namespace = f"big-{time.monotonic_ns()}"
    with server.client(timeout=30) as admin:
        assert admin.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).is_success
        for index in range(BIG_LIST_CONFIGMAPS):
            created = admin.post(
                f"/api/v1/namespaces/{namespace}/configmaps",
                json={"metadata": {"name": f"big-{index}"}, "data": {"blob": "x" * 900_000}},
            )
            assert created.status_code == 201, created.text
    request = (
        f"GET /api/v1/namespaces/{namespace}/configmaps HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        "impersonate-user: reader\r\naccept: application/json\r\nconnection: close\r\n\r\n"
    ).encode()
    with server.connect(timeout=30, receive_buffer=16 * 1024) as connection:
        connection.sendall(request)
        # its answer has begun (the handler runs, holding the seat) once its first bytes arrive
        received = bytearray(connection.recv(1024))
        answer = as_user(server, "bystander", "GET", CONFIGMAPS)
        assert answer is not None and answer[0] == 429
        while chunk := connection.recv(1 << 20):
            received += chunk
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert len(json.loads(body)["items"]) == BIG_LIST_CONFIGMAPS
    answer = as_user(server, "bystander", "GET", CONFIGMAPS)
    assert answer is not None and answer[0] == 200
