"""A request's coroutine started at once, and given a Task only if it has to wait (Python 3.12's eager tasks,
``asyncio.eager_task_factory``, on 3.11).

uvicorn makes a Task for every request: its creation, its registration in asyncio's weak set of tasks, the
loop callback that takes its first step and the done callback cost more than the filters of a GET. Most
requests never wait (memory storage, a body that came with the headers, an answer the transport takes at
once): run here, the first step finishes the request, and no Task is made. A request that does wait gets a
Task that first waits for what the coroutine waits for, then carries it on where it stopped; either way the
coroutine runs in a context of its own (the audit filter sets a context variable per request), as a Task's
does.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Generator
from typing import Any


def start_eagerly(
    loop: asyncio.AbstractEventLoop,
    coroutine: Coroutine[Any, Any, None],
    context: contextvars.Context,
) -> asyncio.Task[None] | None:
    """Run ``coroutine``'s first step in ``context`` now; the Task that carries it on, if it waits."""
    try:
        waits_for = context.run(coroutine.send, None)
    except StopIteration:
        return None
    return loop.create_task(_carried_on(_Resumed(coroutine, waits_for)), context=context)


async def _carried_on(resumed: _Resumed) -> None:
    await resumed


class _Resumed:
    """A coroutine that has taken its first step, as an awaitable: the Task awaiting it first waits for
    what that step yielded (a future, or None for a bare yield), exactly as it would have had it taken
    the step, then steps the coroutine on. What the Task throws in while it waits (a cancellation) is
    thrown into the coroutine, where it waits."""

    __slots__ = ("coroutine", "waits_for")

    def __init__(self, coroutine: Coroutine[Any, Any, None], waits_for: Any) -> None:
        self.coroutine = coroutine
        self.waits_for = waits_for

    def __await__(self) -> Generator[Any, None, None]:
        steps = self.coroutine.__await__()
        waits_for = self.waits_for
        while True:
            try:
                yield waits_for
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as error:
                try:
                    waits_for = steps.throw(error)
                except StopIteration:
                    return
                continue
            yield from steps
            return
