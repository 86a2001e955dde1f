"""The reference server the etcd write ratios are read against: the transport of a write and nothing else.

A create or update through apiforge on etcd costs, besides everything Kubernetes asks of it, three
transports: the HTTP request and response, one etcd txn over gRPC, and the write's own event on the
server's etcd watch (the watch cache follows every write, its own included). This server does exactly
those on the same stack (uvicorn with apiforge's settings, grpc.aio with EtcdStorage's channel options,
the aetcd protobufs) and no Kubernetes work: no admission, field management, validation, defaulting,
conversion or encoding. Its rate over the raw aetcd CAS rate is the ceiling of apiforge's on the same
machine, as the hello app's is for a GET.

Run as ``python -m bench.etcd_floor_app --port P --etcd URL [--prefix /floor/]``. A POST stores its body
under prefix + path + ``/`` + metadata.name if the key is new (201, else 409), as a create's txn does; a
PUT stores its body under prefix + path if the key is still at the revision this process last wrote it at
(200), reading the stored revision and retrying when it is not, as an update's guarded put does; both
answer with the request body. Any other request answers 200 with ``{"events": N}``, the events its watch
has read so far (``/readyz`` for the bench; the count for its test). It is ready once etcd has created its
watch, and answers every request with 503 if the watch ends, so a bench run cannot measure less than the
transport it claims to.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import grpc
import orjson
import uvicorn
from aetcd.rpc import rpc_pb2 as rpc
from aetcd.rpc import rpc_pb2_grpc as rpc_grpc

from apiserver.storage.etcd import CHANNEL_OPTIONS
from bench.hello_app import config

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

TIMEOUT = 15.0


class FloorApp:
    """Plain ASGI over one gRPC channel: the KV stub for the writes and one watch over the prefix."""

    def __init__(self, endpoint: str, prefix: str) -> None:
        self.target = endpoint.removeprefix("http://")
        self.prefix = prefix.encode()
        self.revisions: dict[bytes, int] = {}
        """Each key's mod revision as this process last wrote it (an update's expected revision)."""
        self.events = 0
        self.kv: Any = None
        self.follower: asyncio.Task[None] | None = None

    async def start(self) -> None:
        channel = grpc.aio.insecure_channel(self.target, options=CHANNEL_OPTIONS)
        self.kv = rpc_grpc.KVStub(channel)
        call = rpc_grpc.WatchStub(channel).Watch(wait_for_ready=True)
        end = self.prefix[:-1] + bytes([self.prefix[-1] + 1])
        create = rpc.WatchCreateRequest(key=self.prefix, range_end=end, progress_notify=True)
        await call.write(rpc.WatchRequest(create_request=create))
        created = await call.read()  # ready only once etcd follows the prefix: no write goes unseen
        if created is grpc.aio.EOF or not created.created:
            raise RuntimeError(f"etcd did not create the watch: {created}")
        self.follower = asyncio.get_running_loop().create_task(self._follow(call))

    async def _follow(self, call: Any) -> None:
        """Read every event, as the watch cache's stream does (without prev_kv, as it asks)."""
        while (response := await call.read()) is not grpc.aio.EOF:
            self.events += len(response.events)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await self.start()
                await send({"type": "lifespan.startup.complete"})
            if self.follower is not None:
                self.follower.cancel()
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        status, answer = 200, orjson.dumps({"events": self.events})
        if self.follower is None or self.follower.done():
            # without its watch it would do less than a write's transport: refuse rather than measure that
            status, answer = 503, b'{"message": "the watch has ended"}'
        elif scope["method"] == "POST":
            name = orjson.loads(body)["metadata"]["name"]
            status, answer = await self._create(f"{scope['path']}/{name}".encode(), body), body
        elif scope["method"] == "PUT":
            status, answer = await self._update(scope["path"].encode(), body), body
        headers = [(b"content-type", b"application/json")]
        headers.append((b"content-length", str(len(answer)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    async def _create(self, path: bytes, value: bytes) -> int:
        key = self.prefix + path
        compare = rpc.Compare(
            key=key, target=rpc.Compare.CREATE, result=rpc.Compare.EQUAL, create_revision=0
        )
        put = rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))
        response = await self._txn(rpc.TxnRequest(compare=[compare], success=[put]))
        if not response.succeeded:
            return 409
        self.revisions[key] = int(response.header.revision)
        return 201

    async def _update(self, path: bytes, value: bytes) -> int:
        key = self.prefix + path
        put = rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))
        read = rpc.RequestOp(request_range=rpc.RangeRequest(key=key))
        while True:
            compare = rpc.Compare(
                key=key,
                target=rpc.Compare.MOD,
                result=rpc.Compare.EQUAL,
                # -1 for a key this process has not written: never true, so it reads the key first
                # (0 would be true of an absent key, and the put would create it)
                mod_revision=self.revisions.get(key, -1),
            )
            request = rpc.TxnRequest(compare=[compare], success=[put], failure=[read])
            response = await self._txn(request)
            if response.succeeded:
                self.revisions[key] = int(response.header.revision)
                return 200
            stored = response.responses[0].response_range.kvs
            if not stored:
                return 404
            self.revisions[key] = int(stored[0].mod_revision)

    async def _txn(self, request: Any) -> Any:
        return await self.kv.Txn(request, timeout=TIMEOUT, wait_for_ready=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.etcd_floor_app")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--etcd", required=True, help="etcd client URL, e.g. http://127.0.0.1:2379")
    parser.add_argument("--prefix", default="/floor/")
    options = parser.parse_args(argv)
    uvicorn.Server(config(FloorApp(options.etcd, options.prefix), options.port)).run()


if __name__ == "__main__":
    main()
