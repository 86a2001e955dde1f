"""What one request costs the server from its bytes to its answer's, in process and without a socket: raw
HTTP/1.1 requests fed to the connection as ``apiforge serve`` builds it (uvicorn's httptools protocol with
this server's limits and cycle, the filter chain for ``--insecure-serving``, the APIServer on memory
storage), the answer taken from a transport that keeps what is written.

``python -m bench.wire_bench [create|patch|get] [--glue] [--requests N] [--callgrind]``. ``--glue`` answers
every request with a fixed body after reading its body, in the chain's place of the APIServer's handler: what
is left is the connection's, the cycle's and the filters' own work. Prints µs of CPU per request; under
``valgrind --tool=callgrind --instr-atstart=no`` with ``--callgrind``, only the measured requests are counted
(the instruction count, which the machine's load does not move, divided by N is the cost per request).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import time
from typing import Any

import orjson
import uvicorn
import uvloop
from uvicorn.server import ServerState

from apiserver.endpoints.http import Receive, Request, Scope, Send, respond
from apiserver.filters.pipeline import Pipeline
from apiserver.server.app import APIServer
from apiserver.server.chain import build_handler_chain
from apiserver.server.cli import GC_THRESHOLD
from apiserver.server.connection import LimitedHttpToolsProtocol, protocol_class
from apiserver.server.limits import ConnectionLimits
from apiserver.server.options import ChainOptions
from apiserver.storage import MemoryStorage
from bench.server_bench import crontab
from generated.server import OPENAPI_DIR, build_apis

COLLECTION = "/apis/stable.example.com/v1/namespaces/default/crontabs"
TEMPLATE = orjson.dumps(crontab("NAME-PLACEHOLDER"))
PATCHED = 100
"""The objects the patches and GETs go to, created first."""


class Transport:
    """What the connection writes; ``answer`` is the awaited answer's first write."""

    def __init__(self) -> None:
        self.answer: asyncio.Future[bytes] | None = None

    def write(self, data: bytes) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(data)

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 6443)}.get(
            name, default
        )

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        raise RuntimeError("the server closed the connection")


def request(kind: str, sequence: int) -> bytes:
    """Request ``sequence`` of ``kind`` as a client sends it (bench/loadgen.py's headers)."""
    if kind == "get":  # a new query each time: answered the whole way, never replayed
        return (
            f"GET {COLLECTION}/c-{sequence % PATCHED}?n={sequence} HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            "accept: application/json\r\n\r\n"
        ).encode()
    if kind == "patch":
        path = f"{COLLECTION}/c-{sequence % PATCHED}"
        body = orjson.dumps({"metadata": {"labels": {"round": f"r-{sequence}"}}})
        content_type = "application/merge-patch+json"
        method = "PATCH"
    else:
        path, method, content_type = COLLECTION, "POST", "application/json"
        body = TEMPLATE.replace(b"NAME-PLACEHOLDER", f"c-{sequence}".encode())
    head = (
        f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: {content_type}\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def glue_only(chain: Pipeline) -> Pipeline:
    """The chain's filters around a handler that reads the body and answers a CronTab's bytes."""
    answer = orjson.dumps(crontab("answered"))

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        await Request.from_scope(scope, receive).body()
        await respond(send, 201, answer)

    return Pipeline(chain.steps, handler)


def _callgrind(switch: str) -> None:
    """Counting on or off in the callgrind running this process."""
    subprocess.run(
        ["callgrind_control", f"--instr={switch}", str(os.getpid())],
        check=True,
        capture_output=True,
    )


async def measure(kind: str, requests: int, glue: bool, callgrind: bool) -> float:
    """µs of this process's CPU per request of ``kind``, over ``requests`` of them."""
    server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR)
    await server.start()
    try:
        chain = build_handler_chain(server, ChainOptions(), insecure=True)
        app = glue_only(chain) if glue else chain
        config = (
            uvicorn.Config(  # as ``serve`` builds it (apiserver/server/cli.py): no proxy headers
                app,
                lifespan="off",
                access_log=False,
                http=protocol_class(ConnectionLimits()),
                proxy_headers=False,
                server_header=False,
            )
        )
        config.load()
        protocol = LimitedHttpToolsProtocol(config, ServerState(), {})
        transport = Transport()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()

        async def answered(data: bytes) -> None:
            transport.answer = loop.create_future()
            protocol.data_received(data)
            wire = await transport.answer
            if not wire.startswith((b"HTTP/1.1 200", b"HTTP/1.1 201")):
                raise RuntimeError(wire[:500].decode(errors="replace"))

        warm = [request("create", n) for n in range(PATCHED)]
        warm += [request(kind, n) for n in range(PATCHED, 3 * PATCHED)]
        for data in warm:
            await answered(data)
        measured = [request(kind, n) for n in range(10_000, 10_000 + requests)]
        gc.collect()
        if callgrind:
            _callgrind("on")
        started = time.process_time()
        for data in measured:
            await answered(data)
        cpu = time.process_time() - started
        if callgrind:
            _callgrind("off")
        return cpu / requests * 1e6
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("create", "patch", "get"), nargs="?", default="create")
    parser.add_argument("--glue", action="store_true", help="a fixed answer in the handler's place")
    parser.add_argument("--requests", type=int, default=3_000)
    parser.add_argument("--callgrind", action="store_true", help="count only the measured requests")
    options = parser.parse_args()
    gc.set_threshold(GC_THRESHOLD, 20, 100)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        cpu = runner.run(measure(options.kind, options.requests, options.glue, options.callgrind))
    what = "the glue alone" if options.glue else "the whole way"
    print(f"{options.kind} ({what}): {cpu:,.1f} µs of CPU per request")


if __name__ == "__main__":
    main()
