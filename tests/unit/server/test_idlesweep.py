"""The loop's one idle sweep closes a kept-alive connection once its idle time has passed, never before,
and leaves alone one that became busy again."""

from __future__ import annotations

import asyncio
import functools

from apiserver.server.idlesweep import GRANULARITY, idle_sweep


def test_idle_connections_are_closed_after_their_deadline_and_busy_ones_are_not() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        sweep = idle_sweep(loop)
        assert idle_sweep(loop) is sweep
        closed: dict[str, asyncio.Future[float]] = {}
        started = loop.time()
        for name, seconds in (("idle", 0.2), ("busy again", 0.1), ("later", 0.3)):
            future = closed[name] = loop.create_future()
            sweep.add(name, seconds, functools.partial(_stamp, future, loop))
        sweep.discard("busy again")
        idle_at = await closed["idle"]
        assert not closed["later"].done()
        later_at = await closed["later"]
        assert idle_at - started >= 0.2
        assert later_at - started >= 0.3
        assert later_at - idle_at >= GRANULARITY - 0.01  # one sweep serves a quarter of a second
        assert not closed["busy again"].done() and not sweep.idle

    asyncio.run(main())


def _stamp(future: asyncio.Future[float], loop: asyncio.AbstractEventLoop) -> None:
    future.set_result(loop.time())
