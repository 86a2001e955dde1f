"""A request's coroutine stepped eagerly and finished by a task behaves as if the task had run it all."""

from __future__ import annotations

import asyncio
import contextvars

import pytest
import uvloop

from apiserver.server.eager import start

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="")


@pytest.mark.parametrize("runner", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_results_exceptions_bare_yields_and_context_reach_the_coroutine(runner) -> None:  # type: ignore[no-untyped-def]
    seen: list[object] = []

    async def app() -> None:
        VAR.set("mine")
        seen.append(await asyncio.gather(asyncio.sleep(0.001, "a"), asyncio.sleep(0, "b")))
        await asyncio.sleep(0)  # a bare yield
        failing = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(failing.set_exception, ValueError("boom"))
        try:
            await failing
        except ValueError as error:
            seen.append(str(error))
        seen.append(VAR.get())

    async def main() -> None:
        task = start(app(), asyncio.get_running_loop())
        assert task is not None
        await task
        assert VAR.get() == ""  # the request's context is its own

    runner(main())
    assert seen == [["a", "b"], "boom", "mine"]


def test_a_coroutine_that_never_waits_needs_no_task() -> None:
    done: list[bool] = []

    async def app() -> None:
        done.append(True)

    async def main() -> None:
        assert start(app(), asyncio.get_running_loop()) is None

    asyncio.run(main())
    assert done == [True]


def test_cancelling_the_task_cancels_what_the_coroutine_waits_for() -> None:
    cleaned: list[str] = []

    async def app() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cleaned.append("cancelled")
            raise

    async def main() -> None:
        task = start(app(), asyncio.get_running_loop())
        assert task is not None
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cleaned == ["cancelled"]
