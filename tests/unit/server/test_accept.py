"""The listener's connections accepted all at once (server/accept.py): connections that wait on the listening
socket are made within a turn or two of the loop, not one per turn as libuv would accept them, and each is
served and closed like one uvloop accepted itself."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterator
from typing import cast

import pytest
import uvloop

from apiserver.server.accept import accepting_all

WAITING = 40


class Echo(asyncio.Protocol):
    """Answers what it reads; notes the turn of the loop its connection was made in, and its transport."""

    made: list[int]
    turns: list[int]
    transports: list[asyncio.Transport]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.made.append(self.turns[0])
        # uvloop's TCPTransport is an asyncio.Transport in all but name
        self.transport = cast(asyncio.Transport, transport)
        self.transports.append(self.transport)

    def data_received(self, data: bytes) -> None:
        self.transport.write(data)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    yield sock
    sock.close()


def _connect_waiting(listener: socket.socket) -> list[socket.socket]:
    """Clients whose connections wait in the kernel's accept queue (the kernel completes them unaccepted)."""
    return [socket.create_connection(listener.getsockname()) for _ in range(WAITING)]


def _serve(listener: socket.socket, clients: list[socket.socket]) -> tuple[list[int], int]:
    """The turn of the loop each connection was made in, once all were and every client was echoed; and how
    many file descriptors closing the server's ends of the connections released."""
    made: list[int] = []
    turns = [0]
    transports: list[asyncio.Transport] = []
    noted = type("Noted", (Echo,), {"made": made, "turns": turns, "transports": transports})
    protocol = accepting_all(noted, listener)
    released = 0

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def tick() -> None:
            turns[0] += 1
            if len(made) < WAITING:
                loop.call_soon(tick)

        loop.call_soon(tick)
        server = await loop.create_server(protocol, sock=listener)
        while len(made) < WAITING:
            await asyncio.sleep(0)
        for client in clients:
            client.sendall(b"ping")
        for client in clients:
            assert await loop.sock_recv(client, 4) == b"ping"
        server.close()
        open_now = len(os.listdir("/proc/self/fd"))
        for transport in transports:
            transport.close()
        for client in clients:  # the server's end closed: the client reads its end of stream
            assert await loop.sock_recv(client, 4) == b""
        nonlocal released
        released = open_now - len(os.listdir("/proc/self/fd"))

    for client in clients:
        client.setblocking(False)
    uvloop.run(asyncio.wait_for(main(), 30))
    return made, released


@pytest.fixture
def served(listener: socket.socket) -> tuple[list[int], int]:
    clients = _connect_waiting(listener)
    try:
        return _serve(listener, clients)
    finally:
        for client in clients:
            client.close()


def test_the_first_connection_accepted_in_a_turn_takes_every_waiting_one_with_it(
    served: tuple[list[int], int],
) -> None:
    made, _ = served
    # one accepted by uvloop, the rest by it in the same turn, made in the next ones (libuv alone: 40 turns)
    assert len(made) == WAITING
    assert max(made) - min(made) <= 2


def test_a_connection_accepted_so_closes_its_socket_when_it_ends(
    served: tuple[list[int], int],
) -> None:
    _, released = served
    assert released == WAITING
