"""Every connection waiting on the listening socket accepted in the turn of the loop that accepts one.

libuv, under uvloop, accepts one connection per turn of the event loop (since libuv 1.45: "unix: don't
accept() connections in a loop", https://github.com/libuv/libuv/pull/3696) and counts on the listening socket
staying readable for the next. Under a flood of new connections each turn also carries the handshakes and
requests of the connections accepted before, so the kernel's accept queue drains at one connection per long
turn: a `/readyz` probe that connects behind 300 new connections waits 300 turns (0.4-0.8 s measured at a load
of 2-3) before the server sees it at all. kube-apiserver's Go server accepts in a loop of its own
(net/http ``Server.Serve``: ``Accept``, then ``go c.serve``), as fast as connections come.

So the first connection uvloop accepts in a turn takes the rest of the queue with it: its protocol's
``connection_made`` accepts what else is waiting (at most a backlog's worth) and hands each socket to the loop
as uvloop would have (``connect_accepted_socket``, with a protocol built with the same arguments). The
connections then make their way in the same turns, each at the pace of its own client, instead of one per
turn in the order they arrived. With ``--workers`` each worker has a listening socket of its own
(SO_REUSEPORT), so taking its whole queue takes nothing from the others.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Callable
from typing import Any

MOST_PER_TURN = 2048
"""A turn accepts at most this many more (the listen backlog uvicorn asks for): a client that connects
faster than they are accepted cannot keep the loop in one turn."""


class _AcceptingAll(asyncio.Protocol):
    """Mixed in before the protocol class: accepts the waiting connections before its own starts."""

    listener: socket.socket

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._arguments = (args, kwargs)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        args, kwargs = self._arguments
        accept_waiting(self.listener, functools.partial(type(self), *args, **kwargs))
        super().connection_made(transport)


_handing_over: set[asyncio.Task[Any]] = set()
"""The loop keeps only weak references to tasks: these are kept until their transport is made."""


def accept_waiting(
    listener: socket.socket, protocol_factory: Callable[[], asyncio.Protocol]
) -> None:
    """Accept what waits on ``listener`` (non-blocking) and serve each with a protocol from
    ``protocol_factory``. A closed listener, or one out of file descriptors, has none to give (uvloop's own
    accept meets the error and deals with it)."""
    loop = asyncio.get_running_loop()
    for _ in range(MOST_PER_TURN):
        try:
            connection, _ = listener.accept()
        except OSError:  # BlockingIOError: none left
            return
        connection.setblocking(False)
        task = loop.create_task(loop.connect_accepted_socket(protocol_factory, connection))
        _handing_over.add(task)
        task.add_done_callback(_handing_over.discard)


def accepting_all(
    protocol_class: type[asyncio.Protocol], listener: socket.socket
) -> type[asyncio.Protocol]:
    """``protocol_class`` whose connections, as each is made, accept those waiting behind it on
    ``listener`` (the socket uvicorn serves)."""
    listener.setblocking(False)  # as uvloop sets it: an empty queue must never block the loop
    return type("AcceptingAllProtocol", (_AcceptingAll, protocol_class), {"listener": listener})
