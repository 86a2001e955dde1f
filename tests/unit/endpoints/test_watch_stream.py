"""A watch request ends, and releases its storage watch, when its client goes away while more events are
queued than the stream's buffer holds (the producer must not wait for room nobody will make)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from apiserver.endpoints.http import Message
from tests.inprocess import ASGIApp, Lifespan, build_app

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
MORE_THAN_THE_BUFFER = 1100


def scope(method: str, query: bytes = b"") -> dict[str, Any]:
    return {
        "type": "http",
        "method": method,
        "path": CONFIGMAPS,
        "query_string": query,
        "headers": [(b"content-type", b"application/json")],
    }


async def create(app: ASGIApp, name: str) -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope("POST"), receive, send)
    assert sent[0]["status"] == 201


def test_watch_ends_when_the_client_leaves_with_a_full_buffer() -> None:
    async def body() -> None:
        app = build_app()
        lifespan = Lifespan(app)
        await lifespan.startup()
        try:
            for index in range(MORE_THAN_THE_BUFFER):
                await create(app, f"c{index}")
            started = asyncio.Event()

            async def receive() -> Message:
                await started.wait()  # the client leaves as soon as the stream starts
                return {"type": "http.disconnect"}

            async def send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    started.set()

            handler = asyncio.create_task(app(scope("GET", b"watch=true"), receive, send))
            done, _ = await asyncio.wait([handler], timeout=5)
            handler.cancel()
            assert done, "the watch request did not end after its client left"
        finally:
            await lifespan.shutdown()

    asyncio.run(asyncio.wait_for(body(), timeout=30))
