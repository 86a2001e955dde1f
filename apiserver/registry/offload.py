"""Large writes off the event loop ("the event loop is never held"). Decoding, patching, pruning,
validating and tracking a write is CPU work proportional to its object; for a body near kube's 3 MiB limit
that is hundreds of milliseconds during which, on the loop, no other request is answered. Such work runs on
one worker thread instead, and while it works the interpreter's switch interval drops from 5 ms to 0.5 ms:
a request on the loop takes the GIL back several times (each read, each write), and at 5 ms a wait each
time a small GET took 30-40 ms behind a large patch; at 0.5 ms it waits a few milliseconds, not the whole
write. One thread, so that several large writes queue behind each other rather
than share the GIL with the loop three ways. Small writes stay on the loop: the hop costs ~50 µs."""

from __future__ import annotations

import asyncio
import contextvars
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

HEAVY_BYTES = 16 * 1024
"""An object or body above this size is worked on off the loop: a write costs ~0.1 ms per KiB of JSON on the
loop (~0.8 ms per KiB of YAML), so smaller ones hold it for a few milliseconds at most."""

SWITCH_INTERVAL = 0.0005
"""The GIL switch interval while a large write is worked on (seconds; CPython's default is 0.005)."""

P = ParamSpec("P")
T = TypeVar("T")

_executor: tuple[int, ThreadPoolExecutor] | None = None


def _worker() -> ThreadPoolExecutor:
    """The process's worker thread, made on first use (after a fork, a worker process makes its own: a
    parent's thread does not exist in the child)."""
    global _executor
    pid = os.getpid()
    if _executor is None or _executor[0] != pid:
        _executor = (pid, ThreadPoolExecutor(max_workers=1, thread_name_prefix="apiforge-heavy"))
    return _executor[1]


def is_heavy(size: int) -> bool:
    return size > HEAVY_BYTES


async def run_heavy(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)`` on the worker thread, in the caller's context (as asyncio.to_thread);
    its exception is raised here."""
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        _worker(), lambda: _with_short_switches(context.run, function, *args, **kwargs)
    )


def _with_short_switches(call: Callable[..., T], *args: object, **kwargs: object) -> T:
    """On the worker thread (the only one that changes the interval): short switches while it works."""
    default = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        return call(*args, **kwargs)
    finally:
        sys.setswitchinterval(default)
