"""A small HTTP/1.1 load generator: N keep-alive connections on uvloop, one request in flight each.

It is written with asyncio Protocols (callbacks, no coroutine or task per request) so that its own
cost per request stays far below a Python server's; ``Load.client_ceiling`` reports what it could do
with one full core, so a bench can show that the client was not the bottleneck. Every run is
bounded both by a request count and by a deadline. A response's body has a Content-Length or is chunked
(Go's net/http, so kube-apiserver, chunks any body it did not size before writing 2 KiB of it).
"""

from __future__ import annotations

import asyncio
import math
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from bench.common import cpu_seconds, machine_busy_seconds, run_uvloop

STALL_SECONDS = 30.0
"""How long past its deadline a run may wait for outstanding responses before it fails."""

RequestFactory = Callable[[int], bytes]
"""Builds request ``i`` (a global sequence number, unique within a Load) as raw HTTP/1.1 bytes."""


def get_request(path: str, headers: str = "") -> RequestFactory:
    """``headers``: more raw header lines (each ending in CRLF), e.g. an ``authorization`` one."""
    data = f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json\r\n{headers}\r\n"
    encoded = data.encode()
    return lambda _i: encoded


def post_request(
    path: str,
    body: Callable[[int], bytes],
    headers: str = "",
    *,
    method: str = "POST",
    content_type: str = "application/json",
) -> RequestFactory:
    """A request with a body per sequence number: a create, or (``method``) an update or a patch."""
    head = (
        f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: {content_type}\r\n{headers}"
    )

    def build(i: int) -> bytes:
        payload = body(i)
        return f"{head}content-length: {len(payload)}\r\n\r\n".encode() + payload

    return build


@dataclass(frozen=True)
class Load:
    """One measured run: completed requests, wall time, and CPU spent by the server and the client."""

    requests: int
    failures: int
    seconds: float
    server_cpu: float
    client_cpu: float
    machine_cpu: float = 0.0
    first_failure: str = ""
    latencies: tuple[float, ...] = ()
    """Seconds from sending each measured request to the end of its response."""

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def server_us(self) -> float:
        """Server CPU µs per request: the noise-robust cost (it ignores time the server waited)."""
        return self.server_cpu / self.requests * 1e6 if self.requests else 0.0

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies, 0.99) * 1e3

    @property
    def server_cores(self) -> float:
        return self.server_cpu / self.seconds if self.seconds else 0.0

    @property
    def other_cores(self) -> float:
        """Cores busy with neither the server nor this client (other load on the machine)."""
        if not self.seconds:
            return 0.0
        return max(self.machine_cpu - self.server_cpu - self.client_cpu, 0.0) / self.seconds

    @property
    def client_ceiling(self) -> float:
        """Requests/s this client could drive with one full core of its own."""
        return self.requests / self.client_cpu if self.client_cpu else float("inf")


def percentile(values: tuple[float, ...] | list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` of 1), NaN of nothing."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _chunked_end(buffer: bytearray, start: int) -> int:
    """The end of a chunked body that begins at ``start`` in ``buffer``, or -1 while it is incomplete."""
    at = start
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return -1
        size = int(bytes(buffer[at:line_end]).split(b";")[0], 16)
        at = line_end + 2 + size + 2  # the chunk and its CRLF
        if size == 0:  # no trailers are sent to this client
            return at if len(buffer) >= at else -1
        if len(buffer) < at:
            return -1


class _Run:
    """State shared by the connections of one run."""

    def __init__(self, factory: RequestFactory, expect: int, limit: int, deadline: float) -> None:
        self.factory = factory
        self.expect = expect
        self.limit = limit
        self.deadline = deadline
        self.sequence = 0
        self.done = 0
        self.failures = 0
        self.first_failure = ""
        self.open = 0
        self.latencies: list[float] = []
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def next_request(self) -> bytes | None:
        if self.sequence >= self.limit or time.perf_counter() >= self.deadline:
            return None
        self.sequence += 1
        return self.factory(self.sequence)

    def close_one(self) -> None:
        self.open -= 1
        if self.open == 0 and not self.finished.done():
            self.finished.set_result(None)


class _Connection(asyncio.Protocol):
    def __init__(self, run: _Run) -> None:
        self.run = run
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.body_end = -1  # end of the response being read, once its head is parsed
        self.chunked_from = -1  # where a chunked body starts, while its end is unknown
        self.status = 0
        self.active = False
        self.sent_at = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def start(self, run: _Run) -> None:
        self.run = run
        run.open += 1
        self.active = True
        self._send_next()

    def _send_next(self) -> None:
        request = self.run.next_request()
        if request is None:
            self.active = False
            self.run.close_one()
            return
        assert self.transport is not None
        self.sent_at = time.perf_counter()
        self.transport.write(request)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        while True:
            if self.body_end < 0 and self.chunked_from < 0:
                head_end = buffer.find(b"\r\n\r\n")
                if head_end < 0:
                    return
                head = bytes(buffer[:head_end]).lower()
                self.status = int(head[9:12])
                at = head.find(b"\r\ncontent-length:")
                if at >= 0:
                    line_end = head.find(b"\r\n", at + 2)
                    length = int(head[at + 17 : line_end if line_end >= 0 else None])
                    self.body_end = head_end + 4 + length
                elif b"\r\ntransfer-encoding: chunked" in head:
                    self.chunked_from = head_end + 4
                else:
                    self._abort(f"response without a length: {head[:200]!r}")
                    return
            if self.chunked_from >= 0:
                self.body_end = _chunked_end(buffer, self.chunked_from)
                if self.body_end < 0:
                    return
                self.chunked_from = -1
            if len(buffer) < self.body_end:
                return
            run = self.run
            run.latencies.append(time.perf_counter() - self.sent_at)
            if self.status == run.expect:
                run.done += 1
            else:
                run.failures += 1
                if not run.first_failure:
                    run.first_failure = bytes(buffer[: min(self.body_end, 400)]).decode("latin-1")
            del buffer[: self.body_end]
            self.body_end = -1
            if self.active:
                self._send_next()

    def connection_lost(self, exc: Exception | None) -> None:
        self._abort(f"connection lost: {exc}")

    def _abort(self, reason: str) -> None:
        """Count a failure and stop this connection (its run goes on with the others)."""
        if self.transport is not None:
            self.transport.close()
        if self.active:
            self.active = False
            self.run.failures += 1
            self.run.first_failure = self.run.first_failure or reason
            self.run.close_one()


async def _drive(
    port: int,
    factory: RequestFactory,
    expect: int,
    connections: int,
    seconds: float,
    limit: int,
    warmup: float,
    server_pid: int | None,
    tls: ssl.SSLContext | None,
) -> Load:
    loop = asyncio.get_running_loop()
    placeholder = _Run(factory, expect, 0, 0.0)
    opened = [
        await loop.create_connection(
            lambda: _Connection(placeholder),
            "127.0.0.1",
            port,
            ssl=tls,
            server_hostname="127.0.0.1" if tls else None,
        )
        for _ in range(connections)
    ]
    protocols = [protocol for _transport, protocol in opened]
    try:
        sent = 0
        if warmup > 0:
            warm = _Run(factory, expect, limit, time.perf_counter() + warmup)
            for protocol in protocols:
                protocol.start(warm)
            await asyncio.wait_for(warm.finished, warmup + STALL_SECONDS)
            sent = warm.sequence
        run = _Run(factory, expect, limit + sent, time.perf_counter() + seconds)
        run.sequence = sent  # request numbers stay unique across warm-up and measurement
        server_before = cpu_seconds(server_pid) if server_pid else 0.0
        client_before = time.process_time()
        machine_before = machine_busy_seconds()
        started = time.perf_counter()
        for protocol in protocols:
            protocol.start(run)
        await asyncio.wait_for(run.finished, seconds + STALL_SECONDS)
        elapsed = time.perf_counter() - started
        client_cpu = time.process_time() - client_before
        machine_cpu = machine_busy_seconds() - machine_before
        server_cpu = (cpu_seconds(server_pid) - server_before) if server_pid else 0.0
        return Load(
            run.done,
            run.failures,
            elapsed,
            server_cpu,
            client_cpu,
            machine_cpu,
            run.first_failure,
            tuple(run.latencies),
        )
    finally:
        for transport, _protocol in opened:
            transport.close()


def drive(
    port: int,
    factory: RequestFactory,
    *,
    expect: int = 200,
    connections: int = 32,
    seconds: float = 1.0,
    limit: int = 200_000,
    warmup: float = 0.15,
    server_pid: int | None = None,
    tls: ssl.SSLContext | None = None,
) -> Load:
    """Send requests from ``factory`` over ``connections`` keep-alive connections to 127.0.0.1:port
    (over TLS when ``tls`` is given) until ``limit`` requests or ``seconds`` (after ``warmup``),
    whichever comes first."""
    return run_uvloop(
        _drive(port, factory, expect, connections, seconds, limit, warmup, server_pid, tls)
    )
