"""The request target as the application sees it (path percent-decoded, raw path, query), the same whether
the connection parsed it afresh or kept it from an earlier request, for short and long targets alike; a
target that does not parse is still refused with a 400."""

from __future__ import annotations

import asyncio
from unittest.mock import MagicMock

import orjson
import uvicorn
from uvicorn.server import ServerState

from apiserver.endpoints.http import Receive, Scope, Send, respond
from apiserver.server.connection import LimitedHttpToolsProtocol, protocol_class
from apiserver.server.limits import ConnectionLimits


def _transport() -> MagicMock:
    """A socket's transport that takes every write (``write.call_args_list``) and is never full."""
    transport = MagicMock()
    transport.is_closing.return_value = False
    transport.get_write_buffer_size.return_value = 0
    transport.get_extra_info.return_value = None
    return transport


async def _echo(scope: Scope, receive: Receive, send: Send) -> None:
    target = {
        "path": scope["path"],
        "raw_path": scope["raw_path"].decode(),
        "query": scope["query_string"].decode(),
    }
    await respond(send, 200, orjson.dumps(target))


def _answers(targets: list[bytes]) -> list[bytes]:
    """Each target's whole answer, each on a connection of its own."""

    async def answer(target: bytes) -> bytes:
        config = uvicorn.Config(
            _echo, lifespan="off", access_log=False, http=protocol_class(ConnectionLimits())
        )
        config.load()
        protocol = LimitedHttpToolsProtocol(config, ServerState(), {})
        transport = _transport()
        protocol.connection_made(transport)
        protocol.data_received(b"GET " + target + b" HTTP/1.1\r\nhost: x\r\n\r\n")
        while not transport.write.call_args_list:
            await asyncio.sleep(0)
        protocol.connection_lost(None)
        return b"".join(call.args[0] for call in transport.write.call_args_list)

    async def main() -> list[bytes]:
        return [await answer(target) for target in targets]

    return asyncio.run(main())


def _body(answer: bytes) -> dict[str, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return orjson.loads(body)  # type: ignore[no-any-return]


def test_the_same_target_twice_and_a_long_one_reach_the_app_as_parsed() -> None:
    encoded = b"/api/v1/namespaces/default/configmaps/a%3Ab?labelSelector=x%3Dy"
    long_name = b"n" * 3000
    answers = _answers([encoded, encoded, b"/api/v1/" + long_name + b"?q=1"] * 2)
    decoded = {
        "path": "/api/v1/namespaces/default/configmaps/a:b",
        "raw_path": "/api/v1/namespaces/default/configmaps/a%3Ab",
        "query": "labelSelector=x%3Dy",
    }
    long = {"path": "/api/v1/" + long_name.decode(), "raw_path": "/api/v1/" + long_name.decode()}
    assert [_body(answer) for answer in answers] == [
        decoded,
        decoded,
        {**long, "query": "q=1"},
    ] * 2


def test_a_target_that_does_not_parse_is_400_every_time() -> None:
    answers = _answers([b"http://[bad/api", b"/api/v1/pods", b"http://[bad/api"])
    assert [answer.split(b" ", 2)[1] for answer in answers] == [b"400", b"200", b"400"]
