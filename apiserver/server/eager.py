"""Finishing a coroutine whose first steps ran eagerly, outside any task (what Python 3.12's eager tasks
do, for 3.11): the server steps a request's coroutine at once, and only one that has to wait is handed to a
task, which goes on from what it waits for."""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Coroutine, Generator
from typing import Any


def start(
    coroutine: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop
) -> asyncio.Task[None] | None:
    """Run ``coroutine`` at once, as far as it goes without waiting, in a context of its own (a copy of the
    current one, as a task gets); the task that finishes it if it has to wait, else None."""
    context = contextvars.copy_context()
    try:
        waiting = context.run(coroutine.send, None)
    except StopIteration:
        return None
    return loop.create_task(resume(coroutine, waiting), context=context)


async def resume(coroutine: Coroutine[Any, Any, None], waiting: Any) -> None:
    """Drive ``coroutine`` to its end from the point where it yielded ``waiting``, in the task running this."""
    await _forward(coroutine, waiting)


@types.coroutine
def _forward(coroutine: Coroutine[Any, Any, None], waiting: Any) -> Generator[Any, Any, None]:
    """Hand the task what the coroutine yields (a future, or None for a bare yield), and the coroutine what
    the task sends or throws back: the task drives the coroutine as if it had run it from the start."""
    while True:
        try:
            sent = yield waiting
        except (
            BaseException
        ) as error:  # a future's exception, a cancellation: the coroutine's to handle
            try:
                waiting = coroutine.throw(error)
            except StopIteration:
                return
        else:
            try:
                waiting = coroutine.send(sent)
            except StopIteration:
                return
