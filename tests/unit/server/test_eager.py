"""A request's coroutine runs at once and gets a Task only when it waits; the Task carries it on as a Task
of its own would have: the awaited result, a cancellation thrown in where it waits, its own context."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from apiserver.server.eager import start_eagerly

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_a_coroutine_that_never_waits_is_finished_without_a_task() -> None:
    async def main() -> None:
        ran: list[str] = []

        async def request() -> None:
            WHO.set("request")
            ran.append(WHO.get())

        context = contextvars.copy_context()
        task = start_eagerly(asyncio.get_running_loop(), request(), context)
        assert task is None
        assert ran == ["request"]
        # its own context, not the caller's
        assert context[WHO] == "request" and WHO.get() == "nobody"

    asyncio.run(main())


def test_a_coroutine_that_waits_is_carried_on_by_a_task_in_its_context() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        seen: list[str] = []

        async def request() -> None:
            WHO.set("waiting")
            seen.append(await answer)
            await asyncio.sleep(0)  # a bare yield, after the first wait
            seen.append(WHO.get())

        task = start_eagerly(loop, request(), contextvars.copy_context())
        assert task is not None and not task.done()
        assert WHO.get() == "nobody"
        answer.set_result("answered")
        await task
        assert seen == ["answered", "waiting"]

    asyncio.run(main())


def test_a_cancellation_while_waiting_is_thrown_in_where_the_coroutine_waits() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        never: asyncio.Future[None] = loop.create_future()
        cleaned: list[str] = []

        async def request() -> None:
            try:
                await never
            finally:
                cleaned.append("after hooks ran")

        task = start_eagerly(loop, request(), contextvars.copy_context())
        assert task is not None
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cleaned == ["after hooks ran"]
        assert never.cancelled()

    asyncio.run(main())


def test_an_error_caught_after_a_wait_ends_the_task_as_the_coroutine_ends() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        failing: asyncio.Future[None] = loop.create_future()
        caught: list[str] = []

        async def request() -> None:
            try:
                await failing
            except ValueError as error:
                caught.append(str(error))
            await asyncio.sleep(0)

        task = start_eagerly(loop, request(), contextvars.copy_context())
        assert task is not None
        failing.set_exception(ValueError("storage failed"))
        await task
        assert caught == ["storage failed"]

    asyncio.run(main())
