"""Ending a controller's background tasks: cancel them all, then wait for each to unwind, so a stopped
controller leaves nothing running (and a start after a stop, as a replica that leads again does, begins
clean)."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel_and_wait(*tasks: asyncio.Task[None] | None) -> None:
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    for task in running:
        with contextlib.suppress(asyncio.CancelledError):
            await task
