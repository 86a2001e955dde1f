"""The handshake gate (server/handshakes.py): first handshake steps run at once while a turn's budget lasts,
the others in later turns, the connection made last first, at least one per turn; and over real TLS, the
connections whose handshakes waited are served like the others."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from pathlib import Path

import uvloop

from apiserver.server.accept import accepting_all
from apiserver.server.handshakes import HandshakeGate
from apiserver.server.pki import bootstrap, serving_names
from apiserver.server.tls import server_context
from apiserver.server.tlsoptions import TLSOptions
from apiserver.server.tlssniff import sniffing

TINY = 1e-9
"""A budget any step exceeds: one step per turn."""


Body = Callable[[HandshakeGate, Callable[[str], Callable[[], None]]], None]


def _turns(body: Body, budget: float = TINY) -> list[list[str]]:
    """The steps run in each turn of the loop, for steps admitted by ``body`` in one turn."""
    ran: list[list[str]] = [[]]

    def step(name: str) -> Callable[[], None]:
        return lambda: ran[-1].append(name)

    async def main() -> None:
        body(HandshakeGate(budget), step)
        for _ in range(8):
            ran.append([])
            await asyncio.sleep(0)

    uvloop.run(main())
    return [turn for turn in ran if turn]


def test_the_first_runs_at_once_and_the_rest_one_a_turn_the_connection_made_last_first() -> None:
    admitted: list[bool] = []

    def body(gate: HandshakeGate, step: Callable[[str], Callable[[], None]]) -> None:
        for name, connected in (("a", 1.0), ("b", 3.0), ("c", 2.0), ("d", 3.0)):
            admitted.append(gate.admit(step(name), connected))

    # d and b were made last (d asked last), then c; a ran as it asked
    assert _turns(body) == [["a"], ["d"], ["b"], ["c"]]
    assert admitted == [True, False, False, False]


def test_within_the_budget_every_step_runs_as_it_asks() -> None:
    def body(gate: HandshakeGate, step: Callable[[str], Callable[[], None]]) -> None:
        for index in range(5):
            assert gate.admit(step(str(index)), float(index))

    assert _turns(body, budget=60.0) == [["0", "1", "2", "3", "4"]]


def test_a_step_that_raises_leaves_the_others_to_later_turns() -> None:
    def body(gate: HandshakeGate, step: Callable[[str], Callable[[], None]]) -> None:
        def fails() -> None:
            raise RuntimeError("handshake")

        gate.admit(step("first"), 0.0)
        gate.admit(step("older"), 1.0)
        gate.admit(fails, 2.0)

    # the loop's exception handler reports the failure; the older connection still gets its turn
    assert _turns(body) == [["first"], ["older"]]


class _Counting(HandshakeGate):
    """Counts the steps that waited for a later turn."""

    deferred = 0

    def admit(self, step: Callable[[], None], connected: float) -> bool:
        ran = super().admit(step, connected)
        self.deferred += not ran
        return ran


class _Answer(asyncio.Protocol):
    """Answers its first read with the TLS version, once the handshake is done."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        version = self.transport.get_extra_info("ssl_object").version()
        self.transport.write(version.encode())  # type: ignore[attr-defined]
        self.transport.close()


def test_connections_whose_handshakes_waited_are_served_over_tls(tmp_path: Path) -> None:
    pki = bootstrap(tmp_path, serving_names("127.0.0.1"))
    protocol = sniffing(_Answer, server_context(TLSOptions(), pki), 0)
    gate = protocol.handshakes = _Counting(TINY)
    client = ssl.create_default_context(cadata=pki.ca.certificate_pem().decode())

    async def one(port: int) -> bytes:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client, server_hostname="127.0.0.1"
        )
        writer.write(b"version?")
        answer = await reader.read()
        writer.close()
        return answer

    async def main() -> list[bytes]:
        loop = asyncio.get_running_loop()
        listener = socket.create_server(("127.0.0.1", 0))
        listener.setblocking(False)
        # as `serve` listens: the connections waiting are accepted together, their ClientHellos read together
        server = await loop.create_server(accepting_all(protocol, listener), sock=listener)
        port = listener.getsockname()[1]
        try:
            return await asyncio.wait_for(asyncio.gather(*(one(port) for _ in range(20))), 60)
        finally:
            server.close()

    assert uvloop.run(main()) == [b"TLSv1.3"] * 20
    assert (
        gate.deferred
    )  # their ClientHellos were read in the same turns: all but one a turn waited
