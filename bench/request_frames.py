"""How much Python one GET runs through the filter chain: the frames it makes, coroutines among them, per
request, in process (``python -m bench.request_frames``).

Counted with ``sys.setprofile`` over GETs of one stored CronTab through the chain as ``apiforge serve``
builds it, by default and with an audit log; a frame is counted once however often it is resumed. A
coroutine frame is what an ASGI layer, an ``async def`` step or an ``async def`` send costs beyond a plain
call; these counts do not move with the machine's load, unlike the µs of bench.profile_server.
"""

from __future__ import annotations

import inspect
import sys
import tempfile
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from types import FrameType
from typing import Any

from apiserver.endpoints.http import DONE, ASGIApp, Message
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.options import ChainOptions
from apiserver.storage import MemoryStorage
from bench.chain_bench import KUBECTL_HEADERS, as_served, receive, scope_of, seed
from generated.server import OPENAPI_DIR, build_apis

REQUESTS = 50


class Cycle:
    """A send as the server's connection gives it: a plain call handing back a finished awaitable."""

    transport = None

    def send(self, message: Message) -> Awaitable[None]:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"GET answered {message['status']}")
        return DONE


class Frames:
    """Every frame a request makes, once each (kept alive meanwhile, so that no id is reused)."""

    def __init__(self) -> None:
        self.seen: dict[int, FrameType] = {}

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            self.seen.setdefault(id(frame), frame)

    def counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for frame in self.seen.values():
            counts["frames"] += 1
            if frame.f_code.co_flags & inspect.CO_COROUTINE:
                counts["coroutines"] += 1
                counts[f"  {frame.f_code.co_qualname}"] += 1
        return counts


async def count(app: ASGIApp) -> Counter[str]:
    send = Cycle().send
    await app(scope_of(list(KUBECTL_HEADERS)), receive, send)  # warm
    total: Counter[str] = Counter()
    for _ in range(REQUESTS):
        frames = Frames()
        sys.setprofile(frames)
        try:
            await app(scope_of(list(KUBECTL_HEADERS)), receive, send)
        finally:
            sys.setprofile(None)
        total += frames.counts()
    return total


async def measure() -> dict[str, Counter[str]]:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    try:
        await seed(server)
        with tempfile.TemporaryDirectory() as work:
            audited = build_handler_chain(
                server, ChainOptions(audit_log_path=str(Path(work) / "audit.log"))
            )
            counted = {
                "chain": await count(build_handler_chain(server, ChainOptions())),
                "chain audit": await count(audited),
            }
            audited.close()
        return counted
    finally:
        await server.stop()


def main() -> None:
    for name, counts in as_served(measure()).items():
        print(f"{name}: per GET")
        for key, value in sorted(counts.items(), key=lambda item: (item[0][0] == " ", item[0])):
            print(f"  {value / REQUESTS:6.1f}  {key}")


if __name__ == "__main__":
    main()
