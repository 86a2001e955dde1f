"""The reference servers the benches compare against: ``{"hello":"world"}`` on the apiserver's stack.

Run as ``python -m bench.hello_app --port P [--app raw|starlette] [--loop uvloop|asyncio] [--body-bytes N]
[--tls-cert-file F --tls-private-key-file K]``; every path answers 200 with the JSON (so ``/readyz`` works as
for the apiserver); with a certificate and key it serves TLS (uvicorn's own, as the apiserver's is). The uvicorn settings are
those of apiserver/server/cli.py (httptools, uvloop, no access log, lifespan on, one process).

``--loop asyncio`` starts uvicorn exactly the way cli.py does, ``asyncio.run(server.serve())``: that
ignores the configured ``loop="uvloop"`` (uvicorn applies it only in ``Server.run``), so the process
runs on the stdlib event loop. ``--loop uvloop`` uses ``Server.run``, which honours it.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

HELLO = {"hello": "world"}
body = orjson.dumps(HELLO)
"""What every request is answered with: ``HELLO``, or (``--body-bytes``) a JSON object of that many bytes."""


def padded(size: int) -> bytes:
    """A JSON object of ``size`` bytes (at least the bare hello's): the hello with a ``pad`` string."""
    bare = orjson.dumps({**HELLO, "pad": ""})
    return orjson.dumps({**HELLO, "pad": "x" * max(0, size - len(bare))})


async def raw_app(scope: Scope, receive: Receive, send: Send) -> None:
    """Plain ASGI: the least any Python server on this stack can do per request."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def starlette_app() -> Callable[..., Any]:
    """The same answer through Starlette's router and Response (imported only when asked for:
    Starlette is not an apiforge dependency, only this comparison's)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def hello(_request: Request) -> Response:
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/{path:path}", hello)])


def config(
    app: Callable[..., Any], port: int, certificate: str | None = None, key: str | None = None
) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        lifespan="on",
        log_level="warning",
        access_log=False,
        loop="uvloop",
        http="httptools",
        timeout_graceful_shutdown=5,
        proxy_headers=False,
        server_header=False,
        ssl_certfile=certificate,
        ssl_keyfile=key,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.hello_app")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--app", choices=["raw", "starlette"], default="raw")
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop")
    parser.add_argument("--tls-cert-file")
    parser.add_argument("--tls-private-key-file")
    parser.add_argument(
        "--body-bytes",
        type=int,
        default=0,
        help="answer a JSON object of this size (default: the hello)",
    )
    options = parser.parse_args(argv)
    if options.body_bytes:
        global body
        body = padded(options.body_bytes)
    app = starlette_app() if options.app == "starlette" else raw_app
    server = uvicorn.Server(
        config(app, options.port, options.tls_cert_file, options.tls_private_key_file)
    )
    if options.loop == "asyncio":
        asyncio.run(server.serve())  # as apiserver/server/cli.py does
    else:
        server.run()


if __name__ == "__main__":
    main()
