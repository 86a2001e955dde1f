"""How much Python one GET runs through the filter chain: the frames it makes, coroutines among them, per
request, in process (``python -m bench.request_frames [--profile]``).

Counted with ``sys.setprofile`` over GETs of one stored CronTab through the chain as ``apiforge serve``
builds it, by default and with an audit log; a frame is counted once however often it is resumed. A
coroutine frame is what an ASGI layer, an ``async def`` step or an ``async def`` send costs beyond a plain
call; these counts do not move with the machine's load, unlike the µs of bench.profile_server.

``--profile`` instead runs the default chain's GETs under cProfile timed by the process's CPU clock (time
spent waiting for a core does not count) and prints each filter's share and the handler's, in profiled µs
per GET: the profiler inflates every call, so read the shares, and the CPU µs of bench.chain_bench.
"""

from __future__ import annotations

import cProfile
import inspect
import pstats
import sys
import tempfile
import time
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


PROFILED = 5_000


async def profile() -> pstats.Stats:
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    try:
        await seed(server)
        chain = build_handler_chain(server, ChainOptions())
        send = Cycle().send
        for _ in range(500):  # warm
            await chain(scope_of(list(KUBECTL_HEADERS)), receive, send)
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(PROFILED):
            await chain(scope_of(list(KUBECTL_HEADERS)), receive, send)
        profiler.disable()
        return pstats.Stats(profiler)
    finally:
        await server.stop()


def print_shares(stats: pstats.Stats) -> None:
    """Each step's before and after, the pipeline's own work, and the server's, by cumulative time."""
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(own for (_cc, _n, own, _cum, _callers) in entries.values())
    shares: Counter[str] = Counter()
    for (file, _line, function), (_cc, _n, own, cumulative, _callers) in entries.items():
        module = Path(file).stem
        if "/filters/" in file and function in ("before", "after"):
            shares[f"step {module}"] += cumulative
        elif module == "pipeline" and function in ("__call__", "__init__", "send", "send_outer"):
            shares[f"pipeline {function}"] += own
        elif module == "app" and function == "serve_local":
            shares["the server (routing, storage, encoding, respond)"] += cumulative
    print(f"profiled µs per GET, CPU clock: {total / PROFILED * 1e6:,.1f} in all")
    for name, seconds in shares.most_common():
        print(f"  {seconds / PROFILED * 1e6:7.1f}  {name}")


def main() -> None:
    if "--profile" in sys.argv[1:]:
        print_shares(as_served(profile()))
        return
    for name, counts in as_served(measure()).items():
        print(f"{name}: per GET")
        for key, value in sorted(counts.items(), key=lambda item: (item[0][0] == " ", item[0])):
            print(f"  {value / REQUESTS:6.1f}  {key}")


if __name__ == "__main__":
    main()
