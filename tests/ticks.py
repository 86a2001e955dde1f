"""Whether the event loop is held: the gaps between the ticks of a 1 ms timer while some work is awaited
(a gap as long as the work says the loop was held throughout)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


@asynccontextmanager
async def ticking() -> AsyncIterator[list[float]]:
    """The gaps (seconds) between ticks, filled while the block runs."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        yield gaps
    finally:
        done.set()
        await ticker
