"""The connection's limits and the request timeouts against a real server over raw sockets, with the timeouts
shortened so that nothing waits kube's 32 s: header bytes and count (431, Go's net/http answer to headers past
kube's MaxHeaderBytes of 1 MiB), slow headers and bodies (kube's ReadHeaderTimeout), idle keep-alive
(IdleTimeout), `--request-timeout` (504 with kube's Timeout Status) and `--min-request-timeout` for watches."""

from __future__ import annotations

import contextlib
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.serverproc import ServerProcess, free_port

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 3.0
IDLE_TIMEOUT = 2
REQUEST_TIMEOUT = 1.0
MIN_REQUEST_TIMEOUT = 1


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("data"),
        free_port(),
        storage="memory",
        extra_args=(
            f"--read-header-timeout={HEADER_TIMEOUT}",
            f"--read-body-timeout={BODY_TIMEOUT}",
            f"--idle-timeout={IDLE_TIMEOUT}",
            f"--request-timeout={REQUEST_TIMEOUT}s",
            f"--min-request-timeout={MIN_REQUEST_TIMEOUT}",
        ),
    )
    process.start()
    yield process
    process.stop()


def _connect(server: ServerProcess) -> socket.socket:
    """A connection in TLS, as every client's: the limits hold on the bytes inside it."""
    connection = server.connect()
    connection.settimeout(10)
    return connection


def _read_until_closed(connection: socket.socket) -> bytes:
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except (ConnectionResetError, ssl.SSLEOFError):  # closed without TLS's close_notify
        pass
    return received


def _send_ignoring_reset(connection: socket.socket, data: bytes) -> None:
    """The server may refuse (and close) before the client has sent everything, as Go's does."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, ssl.SSLEOFError):
        connection.sendall(data)


TOO_LARGE = b"HTTP/1.0 431 Request Header Fields Too Large\r\n"


def test_headers_over_a_mebibyte_are_refused_431_as_go_refuses_them(limited: ServerProcess) -> None:
    with _connect(limited) as connection:
        _send_ignoring_reset(
            connection, b"GET /api HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (10 << 20) + b"\r\n\r\n"
        )
        answer = _read_until_closed(connection)
        assert answer.startswith(TOO_LARGE)
        assert answer.endswith(b"\r\n\r\n431 Request Header Fields Too Large")


def test_the_bounds_hold_for_every_request_of_a_kept_alive_connection(
    limited: ServerProcess,
) -> None:
    with _connect(limited) as connection:
        connection.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        head = connection.recv(65536)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        length = int(head.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        body = head.split(b"\r\n\r\n", 1)[1]
        while len(body) < length:
            body += connection.recv(65536)
        big = b"X-Big: " + b"a" * (2 << 20) + b"\r\n"
        _send_ignoring_reset(connection, b"GET /api HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n")
        assert _read_until_closed(connection).startswith(TOO_LARGE)


def test_ten_thousand_headers_are_refused_431(limited: ServerProcess) -> None:
    with _connect(limited) as connection:
        many = b"".join(b"X-%d: a\r\n" % i for i in range(10_000))
        _send_ignoring_reset(connection, b"GET /api HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
        assert _read_until_closed(connection).startswith(TOO_LARGE)


def test_headers_just_under_the_limit_are_served(limited: ServerProcess) -> None:
    big = "a" * ((1 << 20) - 1024)
    with limited.client(timeout=10) as client:
        assert client.get("/api", headers={"X-Big": big}).status_code == 200
        # and the keep-alive connection serves the next request
        assert client.get("/api").status_code == 200


def test_slow_headers_are_cut_at_the_header_timeout(limited: ServerProcess) -> None:
    with _connect(limited) as connection:
        connection.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\nX-Slow: 1")
        started = time.monotonic()
        assert _read_until_closed(connection) == b""  # closed without an answer, as Go closes it
        assert HEADER_TIMEOUT - 0.2 < time.monotonic() - started < HEADER_TIMEOUT + 2


def test_two_hundred_slowloris_connections_do_not_hold_the_server(limited: ServerProcess) -> None:
    slow = [_connect(limited) for _ in range(200)]
    for connection in slow:
        connection.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n")
    with limited.client(timeout=5) as client:
        assert client.get("/api").status_code == 200
    time.sleep(HEADER_TIMEOUT + 1)
    for connection in slow:
        with connection:
            connection.settimeout(2)
            assert _read_until_closed(connection) == b""


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout(
    limited: ServerProcess,
) -> None:
    with _connect(limited) as connection:
        # the idle timer starts when the response is written, after this send: the clock starts before it, as
        # the time spent reading the response (the sleep, and more under load) is idle time already
        started = time.monotonic()
        connection.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)
        head = connection.recv(65536)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        length = int(head.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        body = head.split(b"\r\n\r\n", 1)[1]
        while len(body) < length:  # TLS hands the headers and the body over in records of their own
            body += connection.recv(65536)
        assert _read_until_closed(connection) == b""
        # longer than the header timeout: an idle connection gets the idle timeout, not the header one
        # (the upper bound is loose: a loaded machine delays the close, never makes it early)
        assert IDLE_TIMEOUT - 0.3 < time.monotonic() - started < IDLE_TIMEOUT + 6


def test_a_request_waiting_for_a_slow_body_gets_kubes_504_then_the_body_timeout_closes(
    limited: ServerProcess,
) -> None:
    with _connect(limited) as connection:
        connection.sendall(
            b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        started = time.monotonic()
        answer = _read_until_closed(connection)
        assert BODY_TIMEOUT - 0.3 < time.monotonic() - started < BODY_TIMEOUT + 2
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 504 Gateway Timeout\r\n")
        # apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
        status = orjson.loads(body)
        assert (status["reason"], status["code"], status["message"]) == (
            "Timeout",
            504,
            "Timeout: request did not complete within the allotted timeout",
        )


def test_a_malformed_timeout_parameter_is_kubes_400(limited: ServerProcess) -> None:
    answer = limited.http("GET", "/api/v1/namespaces", params={"timeout": "abc"})
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        'invalid timeout specified in the request URL - time: invalid duration "abc"'
    )


def test_a_watch_without_timeout_seconds_lasts_between_min_and_twice_min_request_timeout(
    limited: ServerProcess,
) -> None:
    started = time.monotonic()
    with (
        limited.client(timeout=10) as client,
        client.stream("GET", "/api/v1/namespaces", params={"watch": "1"}) as stream,
    ):
        assert (
            stream.status_code == 200
        )  # a watch is long-running: the 1 s request timeout spares it
        for _ in stream.iter_lines():
            pass
    assert MIN_REQUEST_TIMEOUT - 0.1 < time.monotonic() - started < 2 * MIN_REQUEST_TIMEOUT + 1


def test_kubectl_surfaces_a_request_timeout_parameter_it_sends(
    limited: ServerProcess, tmp_path: Path
) -> None:
    """kubectl's --request-timeout becomes ?timeout= on each request; the server honours shorter ones."""
    import subprocess

    result = subprocess.run(
        [
            "kubectl",
            "--kubeconfig",
            str(limited.kubeconfig),
            "get",
            "namespaces",
            "--request-timeout=5s",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "default" in result.stdout
