"""The load of the UPDATE phases: one keep-alive connection per object, each PUT carrying the object as the
last response returned it (so its current resourceVersion, a precondition) with a counter annotation bumped."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import orjson

from bench.common import cpu_seconds
from bench.engine.settings import COUNTER, WRITE_LIMIT
from bench.loadgen import STALL_SECONDS, Load


class _UpdateRun:
    def __init__(self, limit: int, deadline: float) -> None:
        self.limit = limit
        self.deadline = deadline
        self.sent = 0
        self.done = 0
        self.failures = 0
        self.first_failure = ""
        self.open = 0
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def close_one(self) -> None:
        self.open -= 1
        if self.open == 0 and not self.finished.done():
            self.finished.set_result(None)


class _Updater(asyncio.Protocol):
    """One keep-alive connection PUTting one object: the body is the last response with a counter
    annotation bumped, so it carries the current resourceVersion (a precondition) and changes."""

    def __init__(self, path: str, obj: dict[str, Any], run: _UpdateRun) -> None:
        self.head = f"PUT {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        self.obj = obj
        self.run = run
        self.buffer = bytearray()
        self.body_end = -1
        self.status = 0
        self.transport: asyncio.Transport | None = None
        self.active = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def start(self, run: _UpdateRun) -> None:
        self.run = run
        run.open += 1
        self.active = True
        self._send_next()

    def _send_next(self) -> None:
        run = self.run
        if run.sent >= run.limit or time.perf_counter() >= run.deadline:
            self.active = False
            run.close_one()
            return
        run.sent += 1
        annotations = self.obj["metadata"].setdefault("annotations", {})
        annotations[COUNTER] = str(int(annotations.get(COUNTER, "0")) + 1)
        payload = orjson.dumps(self.obj)
        assert self.transport is not None
        self.transport.write(
            f"{self.head}content-length: {len(payload)}\r\n\r\n".encode() + payload
        )

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if self.body_end < 0:
            head_end = buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(buffer[:head_end]).lower()
            self.status = int(head[9:12])
            at = head.find(b"\r\ncontent-length:")
            line_end = head.find(b"\r\n", at + 2)
            length = int(head[at + 17 : line_end if line_end >= 0 else None])
            self.body_end = head_end + 4 + length
        if len(buffer) < self.body_end:
            return
        body = bytes(buffer[buffer.find(b"\r\n\r\n") + 4 : self.body_end])
        del buffer[: self.body_end]
        self.body_end = -1
        run = self.run
        if self.status == 200:
            run.done += 1
            self.obj = orjson.loads(body)
        else:
            run.failures += 1
            run.first_failure = run.first_failure or body[:400].decode("latin-1")
            self.active = False
            run.close_one()
            return
        if self.active:
            self._send_next()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.active:
            self.active = False
            self.run.failures += 1
            self.run.first_failure = self.run.first_failure or f"connection lost: {exc}"
            self.run.close_one()


async def drive_updates(
    port: int, objects: list[tuple[str, dict[str, Any]]], seconds: float, server_pid: int
) -> Load:
    """PUTs over one connection per object for ``seconds``; ``objects`` is updated in place with each
    object's latest state (so the next phase starts at the current resourceVersion)."""
    loop = asyncio.get_running_loop()
    placeholder = _UpdateRun(0, 0.0)
    protocols: list[_Updater] = []
    for path, obj in objects:
        _transport, protocol = await loop.create_connection(
            lambda p=path, o=obj: _Updater(p, o, placeholder),  # type: ignore[misc]
            "127.0.0.1",
            port,
        )
        protocols.append(protocol)
    try:
        run = _UpdateRun(WRITE_LIMIT, time.perf_counter() + seconds)
        server_before, client_before = cpu_seconds(server_pid), time.process_time()
        started = time.perf_counter()
        for protocol in protocols:
            protocol.start(run)
        await asyncio.wait_for(run.finished, seconds + STALL_SECONDS)
        elapsed = time.perf_counter() - started
        return Load(
            run.done,
            run.failures,
            elapsed,
            cpu_seconds(server_pid) - server_before,
            time.process_time() - client_before,
            first_failure=run.first_failure,
        )
    finally:
        for index, protocol in enumerate(protocols):
            objects[index] = (objects[index][0], protocol.obj)
            if protocol.transport is not None:
                protocol.transport.close()
