"""Watch fan-out load: many watch connections on one collection, one paced writer, per-event latency.

Every watcher is an asyncio Protocol on uvloop that parses the chunked watch response itself (one
JSON event per line) and notes, per event, the moment its line arrived. It does not decode the JSON:
it finds the object's name (``<tag>-<n>``, unique per write) with one ``bytes.find``, so a thousand
watchers cost the client little next to what the server spends on them. The writer creates CronTabs
``<tag>-0`` … ``<tag>-<N-1>`` over one keep-alive connection at a fixed pace and records when each
create was sent and when its 201 came back. A delivery's latency is its arrival minus the moment the
write was sent, which includes the write's own handling and commit: the server writes to idle watchers
before it acknowledges the create, so arrival minus acknowledgement (also reported) can be negative.

Optionally one more watcher connects with a tiny receive buffer and never reads: the "stalled"
watcher. The run then reports what the server did about it, from the kernel's view of the server's
socket (/proc/net/tcp: still ESTABLISHED, closing, or gone; and the bytes queued towards it) and the
server's resident memory.

Everything is bounded: the writes by count and a deadline, the wait for deliveries by a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from bench.common import cpu_seconds, run_uvloop

CONNECT_BATCH = 100
"""Watch connections opened concurrently at a time."""

STALLED_RCVBUF = 4096
"""The stalled watcher's receive buffer (the kernel doubles it): it fills after a few events."""

TCP_STATES = {
    "01": "ESTABLISHED",
    "02": "SYN_SENT",
    "03": "SYN_RECV",
    "04": "FIN_WAIT1",
    "05": "FIN_WAIT2",
    "06": "TIME_WAIT",
    "07": "CLOSE",
    "08": "CLOSE_WAIT",
    "09": "LAST_ACK",
    "0A": "LISTEN",
    "0B": "CLOSING",
}


def raise_open_file_limit(needed: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``needed`` (up to the hard limit); the new soft
    limit. Child processes started afterwards (the server) inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def rss_bytes(pid: int) -> int:
    """Resident set size of a process, from /proc/PID/status (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def open_fds(pid: int) -> int:
    try:
        return len(list(Path(f"/proc/{pid}/fd").iterdir()))
    except OSError:
        return 0


@dataclass(frozen=True)
class SocketState:
    """One side of a loopback TCP connection as /proc/net/tcp shows it."""

    state: str  # ESTABLISHED, FIN_WAIT1, ... or "gone"
    send_queue: int  # bytes written by the process, not yet acknowledged by the peer
    receive_queue: int  # bytes received, not yet read by the process


def tcp_socket_state(local_port: int, remote_port: int) -> SocketState:
    """The kernel's view of the 127.0.0.1 socket from ``local_port`` to ``remote_port``."""
    want_local, want_remote = f":{local_port:04X}", f":{remote_port:04X}"
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return SocketState("unknown", 0, 0)
    for line in lines:
        fields = line.split()
        if fields[1].endswith(want_local) and fields[2].endswith(want_remote):
            tx, rx = fields[4].split(":")
            return SocketState(TCP_STATES.get(fields[3], fields[3]), int(tx, 16), int(rx, 16))
    return SocketState("gone", 0, 0)


@dataclass
class StalledReport:
    """What became of the watcher that never read."""

    server_side: SocketState
    client_side: SocketState
    waited: float  # seconds after the last write before the state was read
    server_rss_growth: int  # bytes, from before the watchers connected to the end of the run

    @property
    def cut_off(self) -> bool:
        return self.server_side.state != "ESTABLISHED"


@dataclass
class FanResult:
    """One fan-out run."""

    watchers: int
    writes: int  # asked for
    written: int  # acknowledged before the write deadline
    write_seconds_total: float  # first write sent → last acknowledged
    seconds: float  # first write sent → last delivery (or the drain deadline)
    from_ack: list[float]  # per delivery: arrival - write acknowledged, seconds
    from_send: list[float]  # per delivery: arrival - write sent, seconds
    missing: int  # (watcher, event) pairs never delivered before the deadline
    errors: int  # watch streams that ended or sent an ERROR event
    write_seconds: list[float]  # per write: acknowledged - sent
    server_cpu: float
    client_cpu: float
    stalled: StalledReport | None = None

    @property
    def write_rate(self) -> float:
        return self.written / self.write_seconds_total if self.write_seconds_total else 0.0

    @property
    def delivered(self) -> int:
        return len(self.from_ack)

    @property
    def server_us_per_delivery(self) -> float:
        return self.server_cpu / self.delivered * 1e6 if self.delivered else 0.0


@dataclass
class _Fan:
    """State shared by the watchers of one run."""

    marker: bytes  # b'"name":"<tag>-'
    writes: int
    expected: int
    arrivals: list[list[float]] = field(default_factory=list)
    received: int = 0
    ready: int = 0
    errors: int = 0
    all_ready: asyncio.Future[None] | None = None
    all_received: asyncio.Future[None] | None = None
    watchers: int = 0

    def __post_init__(self) -> None:
        self.arrivals = [[] for _ in range(self.writes)]
        loop = asyncio.get_running_loop()
        self.all_ready = loop.create_future()
        self.all_received = loop.create_future()

    def became_ready(self) -> None:
        self.ready += 1
        if self.ready == self.watchers and self.all_ready and not self.all_ready.done():
            self.all_ready.set_result(None)

    def arrived(self, index: int, at: float) -> None:
        if 0 <= index < self.writes:
            self.arrivals[index].append(at)
            self.received += 1
            done = self.all_received
            if self.received >= self.expected and done is not None and not done.done():
                done.set_result(None)

    def failed(self) -> None:
        self.errors += 1


class _Watcher(asyncio.Protocol):
    """One watch connection: sends the request, parses the chunked response line by line."""

    def __init__(self, fan: _Fan, request: bytes) -> None:
        self.fan = fan
        self.request = request
        self.buffer = bytearray()
        self.line = bytearray()
        self.transport: asyncio.Transport | None = None
        self.head_done = False
        self.ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        buffer = self.buffer
        buffer += data
        if not self.head_done:
            head_end = buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(buffer[:head_end]).lower()
            if head[9:12] != b"200" or b"transfer-encoding: chunked" not in head:
                self._fail()
                return
            del buffer[: head_end + 4]
            self.head_done = True
            self.fan.became_ready()
        while not self.ended:
            size_end = buffer.find(b"\r\n")
            if size_end < 0:
                return
            size = int(buffer[:size_end].split(b";", 1)[0], 16)
            if size == 0:
                self.ended = True  # the server ended the stream
                self.fan.failed()
                return
            chunk_end = size_end + 2 + size
            if len(buffer) < chunk_end + 2:
                return
            self.line += buffer[size_end + 2 : chunk_end]
            del buffer[: chunk_end + 2]
            self._lines(now)

    def _lines(self, now: float) -> None:
        line = self.line
        marker = self.fan.marker
        start = 0
        while (end := line.find(b"\n", start)) >= 0:
            at = line.find(marker, start, end)
            if at >= 0:
                digits = at + len(marker)
                self.fan.arrived(int(line[digits : line.find(b'"', digits, end)]), now)
            elif line.find(b'"type":"ERROR"', start, end) >= 0:
                self.fan.failed()
            start = end + 1
        del line[:start]

    def _fail(self) -> None:
        self.ended = True
        self.fan.failed()
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended:
            self.ended = True
            self.fan.failed()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One response's status and body, sized by Content-Length or chunked (as Go's net/http sends any
    body of more than 2 KiB that the handler did not size)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lines = head.lower().split(b"\r\n")
    if b"transfer-encoding: chunked" in lines:
        chunks = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readexactly(2)  # the empty line after the last chunk (no trailers are sent)
        return status, b"".join(chunks)
    length = 0
    for line in lines:
        if line.startswith(b"content-length:"):
            length = int(line[15:])
    return status, await reader.readexactly(length)


async def _writer(
    port: int,
    path: str,
    body: Callable[[int], bytes],
    writes: int,
    rate: float,
    sent: list[float],
    acked: list[float],
    deadline: float,
    tls: ssl.SSLContext | None,
    headers: str,
) -> None:
    """Create ``writes`` objects at ``rate`` per second over one keep-alive connection."""
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=tls, server_hostname="127.0.0.1" if tls else None
    )
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n{headers}"
    try:
        start = time.perf_counter()
        for index in range(writes):
            pause = start + index / rate - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)
            if time.perf_counter() >= deadline:
                return
            payload = body(index)
            sent[index] = time.perf_counter()
            writer.write(f"{head}content-length: {len(payload)}\r\n\r\n".encode() + payload)
            status, answer = await _read_response(reader)
            acked[index] = time.perf_counter()
            if status != 201:
                raise RuntimeError(f"fan-out write {index} failed: {status} {answer[:300]!r}")
    finally:
        writer.close()


def _stalled_socket(port: int, request: bytes) -> socket.socket:
    """A watch connection that sends its request and never reads a byte of the answer."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STALLED_RCVBUF)
    sock.connect(("127.0.0.1", port))
    sock.sendall(request)
    return sock


async def _fan_out(
    port: int,
    watch_path: str,
    create_path: str,
    tag: str,
    body: Callable[[int], bytes],
    watchers: int,
    writes: int,
    rate: float,
    stalled: bool,
    server_pid: int,
    write_grace: float,
    drain_seconds: float,
    tls: ssl.SSLContext | None,
    headers: str,
) -> FanResult:
    loop = asyncio.get_running_loop()
    request = (
        f"GET {watch_path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json\r\n{headers}\r\n"
    )
    fan = _Fan(f'"name":"{tag}-'.encode(), writes, watchers * writes)
    fan.watchers = watchers
    rss_before = rss_bytes(server_pid)
    stalled_sock = _stalled_socket(port, request.encode()) if stalled else None
    transports: list[asyncio.BaseTransport] = []
    try:
        for first in range(0, watchers, CONNECT_BATCH):
            opened = await asyncio.gather(
                *(
                    loop.create_connection(
                        lambda: _Watcher(fan, request.encode()),
                        "127.0.0.1",
                        port,
                        ssl=tls,
                        server_hostname="127.0.0.1" if tls else None,
                    )
                    for _ in range(first, min(first + CONNECT_BATCH, watchers))
                )
            )
            transports.extend(transport for transport, _protocol in opened)
        assert fan.all_ready is not None and fan.all_received is not None
        await asyncio.wait_for(fan.all_ready, 30)
        await asyncio.sleep(0.3)  # every watch has subscribed (it replays from its rv regardless)
        sent, acked = [0.0] * writes, [0.0] * writes
        server_before, client_before = cpu_seconds(server_pid), time.process_time()
        started = time.perf_counter()
        write_deadline = started + writes / rate + write_grace
        await _writer(
            port, create_path, body, writes, rate, sent, acked, write_deadline, tls, headers
        )
        last_write = time.perf_counter()
        written = sum(1 for at in acked if at)
        fan.expected = watchers * written  # deliveries of the writes that were made
        if fan.received >= fan.expected and not fan.all_received.done():
            fan.all_received.set_result(None)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(fan.all_received), drain_seconds)
        elapsed = time.perf_counter() - started
        server_cpu = cpu_seconds(server_pid) - server_before
        client_cpu = time.process_time() - client_before
        stalled_report = None
        if stalled_sock is not None:
            await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - last_write)))
            local_port = stalled_sock.getsockname()[1]
            stalled_report = StalledReport(
                tcp_socket_state(port, local_port),
                tcp_socket_state(local_port, port),
                time.perf_counter() - last_write,
                rss_bytes(server_pid) - rss_before,
            )
        from_ack: list[float] = []
        from_send: list[float] = []
        for index, arrivals in enumerate(fan.arrivals):
            if acked[index]:
                from_ack.extend(at - acked[index] for at in arrivals)
                from_send.extend(at - sent[index] for at in arrivals)
        return FanResult(
            watchers,
            writes,
            written,
            last_write - started,
            elapsed,
            from_ack,
            from_send,
            fan.expected - fan.received,
            fan.errors,
            [a - s for s, a in zip(sent, acked, strict=True) if a],
            server_cpu,
            client_cpu,
            stalled_report,
        )
    finally:
        for transport in transports:
            transport.close()
        if stalled_sock is not None:
            stalled_sock.close()
        await asyncio.sleep(0.2)  # let the closes reach the server before the next run


def fan_out(
    port: int,
    watch_path: str,
    create_path: str,
    tag: str,
    body: Callable[[int], bytes],
    *,
    watchers: int,
    writes: int,
    rate: float,
    stalled: bool,
    server_pid: int,
    write_grace: float = 2.0,
    drain_seconds: float = 3.0,
    tls: ssl.SSLContext | None = None,
    headers: str = "",
) -> FanResult:
    """``watchers`` watches on ``watch_path`` (plus a stalled one if asked), then up to ``writes``
    creates POSTed to ``create_path`` at ``rate``/s, one at a time (the next is sent once the last is
    acknowledged, so an overloaded server slows the writer down rather than queueing writes), with
    bodies from ``body`` naming objects ``<tag>-<n>``. Writing stops ``write_grace`` seconds after
    the schedule's end; deliveries are awaited up to ``drain_seconds`` after the last write. Over TLS
    when ``tls`` is given, with ``headers`` (raw lines) on every request; a stalled watcher is plain TCP."""
    raise_open_file_limit(watchers + 256)
    return run_uvloop(
        _fan_out(
            port,
            watch_path,
            create_path,
            tag,
            body,
            watchers,
            writes,
            rate,
            stalled,
            server_pid,
            write_grace,
            drain_seconds,
            tls,
            headers,
        )
    )
