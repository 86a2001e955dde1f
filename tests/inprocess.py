"""The real server in the test's own process: the generated API over memory storage, spoken to by httpx.

Most behaviour a client sees (routing, decoding, negotiation, Table, discovery, OpenAPI, CRUD) needs no process:
the ASGI app answers the same bytes whether uvicorn or a test calls it. Starting it here costs ~0.1 s instead of
a subprocess's seconds, and a failure's traceback is the test's own. Subprocess servers (tests/serverproc.py)
stay where a process matters: persistence, workers, signals, real clients.

Two ways in:
* ``async with inprocess_client() as client`` (an ``httpx.AsyncClient``) inside the test's own event loop;
* ``with InProcessServer() as server`` and ``server.client()`` (an ``httpx.Client``), for sync tests: the app
  and its background tasks (watch caches, namespace controller, compactor) run on a loop in a thread, as they
  run on uvicorn's loop, so sync tests written for a subprocess server work unchanged.

Both speak to the app through :class:`StreamingASGITransport`, which, unlike ``httpx.ASGITransport``, hands the
response over at its start and streams the body, so watches work; closing the response is the client going
away (``http.disconnect``).

The app is built in one place, :func:`build_app`: what the server's constructor and filter chain take changes
there only.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, TypeVar

import httpx

from apiserver.authentication.authenticator import Authenticator
from apiserver.authentication.token import TokenAuthentication
from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import Message, Receive, Scope, Send
from apiserver.server.app import APIServer
from apiserver.server.chain import ChainOptions, build_handler_chain
from apiserver.storage import MemoryStorage, Storage
from generated.server import OPENAPI_DIR, build_apis

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
BASE_URL = "http://inprocess"
TIMEOUT = 10.0
T = TypeVar("T")


class BearerUsers:
    """A test authenticator: the bearer token `NAME` or `NAME/GROUP,GROUP` is that user, so one in-process
    server can be spoken to as several users (no credentials are checked: tests only). A request without a
    token is ``default`` (None: anonymous), for clients that send no token over plain HTTP (kubectl), which
    then act as others with impersonation (`--as`)."""

    def __init__(self, default: UserInfo | None = None) -> None:
        self.default = default

    async def authenticate(self, scope: Mapping[str, Any]) -> UserInfo | None:
        for key, value in scope["headers"]:
            if key == b"authorization" and value.startswith(b"Bearer "):
                name, _, groups = value[7:].decode().partition("/")
                return UserInfo(name, groups=tuple(g for g in groups.split(",") if g))
        return self.default


def build_app(
    storage: Storage | None = None,
    *,
    authorization_mode: str = "AlwaysAllow",
    authenticators: Sequence[Authenticator] = (),
    tokens: TokenAuthentication | None = None,
) -> ASGIApp:
    """The server exactly as ``apiforge serve`` assembles it, its filter chain included, over ``storage`` (a
    fresh memory store by default), with ``--authorization-mode``, the ``authenticators`` given and ``tokens``
    as its bearer-token authentication (no token issued by default). The one place tests construct the
    app."""
    options = ChainOptions(authorization_mode=authorization_mode)
    server = APIServer(
        build_apis(),
        storage or MemoryStorage(),
        OPENAPI_DIR,
        authorization_modes=options.authorization_modes,
        tokens=tokens,
    )
    return build_handler_chain(server, options, authenticators)


class Lifespan:
    """Drives an app's ASGI lifespan (startup, then shutdown) as uvicorn does, so that whatever wraps the app
    sees the same messages."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def startup(self) -> None:
        self._task = asyncio.create_task(
            self._app({"type": "lifespan", "asgi": {"version": "3.0"}}, self._inbox.get, self._send)
        )
        await self._inbox.put({"type": "lifespan.startup"})
        answer = await self._answer()
        if answer["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"the app did not start: {answer.get('message', answer)}")

    async def shutdown(self) -> None:
        await self._inbox.put({"type": "lifespan.shutdown"})
        answer = await self._answer()
        if answer["type"] != "lifespan.shutdown.complete":
            raise RuntimeError(f"the app did not stop: {answer}")
        assert self._task is not None
        await self._task

    async def _send(self, message: Message) -> None:
        await self._outbox.put(message)

    async def _answer(self) -> Message:
        assert self._task is not None
        getting = asyncio.ensure_future(self._outbox.get())
        await asyncio.wait([getting, self._task], timeout=TIMEOUT, return_when="FIRST_COMPLETED")
        if not getting.done():
            getting.cancel()
            if self._task.done():
                self._task.result()  # the app's own exception, if it raised one
            raise RuntimeError("the app did not answer its lifespan message")
        return getting.result()


class _ResponseBody(httpx.AsyncByteStream):
    """A response body as the app sends it; closing it early tells the app the client went away."""

    def __init__(
        self, chunks: asyncio.Queue[bytes | None], gone: asyncio.Event, app: asyncio.Task[None]
    ) -> None:
        self._chunks = chunks
        self._gone = gone
        self._app = app

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (chunk := await self._chunks.get()) is not None:
            yield chunk

    async def aclose(self) -> None:
        self._gone.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._app), TIMEOUT)
        except TimeoutError:
            self._app.cancel()
            raise RuntimeError("the app did not end its response after the client left") from None


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """httpx to an ASGI app in this event loop, the response returned once it starts and its body streamed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(key.lower(), value) for key, value in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port),
            "client": ("127.0.0.1", 0),
            "root_path": "",
        }
        sent_body = False
        gone = asyncio.Event()
        started: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()

        async def receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.set_result(message)
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    await chunks.put(message["body"])
                if not message.get("more_body", False):
                    await chunks.put(None)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except BaseException as error:
                if not started.done():
                    started.set_exception(error)
                raise
            finally:
                await chunks.put(None)  # a body the app never finished ends here
            if not started.done():
                started.set_exception(RuntimeError("the app returned without a response"))

        task = asyncio.create_task(run())
        start = await started
        return httpx.Response(
            start["status"],
            headers=start.get("headers", []),
            stream=_ResponseBody(chunks, gone, task),
            request=request,
        )


@asynccontextmanager
async def inprocess_client(app: ASGIApp | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """An ``httpx.AsyncClient`` to a started app (``build_app()`` by default), stopped on exit."""
    app = app or build_app()
    lifespan = Lifespan(app)
    await lifespan.startup()
    try:
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client
    finally:
        await lifespan.shutdown()


class _SyncBody(httpx.SyncByteStream):
    """An async response body read from another thread, one chunk at a time."""

    def __init__(self, server: InProcessServer, stream: httpx.AsyncByteStream, timeout: float):
        self._server = server
        self._chunks = stream.__aiter__()
        self._stream = stream
        self._timeout = timeout

    def __iter__(self) -> Iterator[bytes]:
        while True:
            try:
                yield self._server.call(self._chunks.__anext__(), self._timeout)
            except StopAsyncIteration:
                return

    def close(self) -> None:
        self._server.call(self._stream.aclose(), TIMEOUT * 2)


class _SyncTransport(httpx.BaseTransport):
    """A sync httpx transport that hands each request to the server's loop thread."""

    def __init__(self, server: InProcessServer) -> None:
        self._server = server
        self._transport = StreamingASGITransport(server.app)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        read_timeout = timeouts.get("read") or TIMEOUT
        body = request.read()
        relayed = httpx.Request(request.method, request.url, headers=request.headers, content=body)
        response = self._server.call(self._transport.handle_async_request(relayed), read_timeout)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_SyncBody(self._server, response.stream, read_timeout),
            request=request,
        )


class InProcessServer:
    """The app started on an event loop of its own thread, for sync tests; ``client()`` speaks to it."""

    def __init__(self, app: ASGIApp | None = None) -> None:
        self.app = app or build_app()
        self.url = BASE_URL
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._lifespan = Lifespan(self.app)

    def call(self, coroutine: Awaitable[T], timeout: float = TIMEOUT) -> T:
        """Run ``coroutine`` on the server's loop and return its result (or raise its exception)."""

        async def wrapped() -> T:
            return await coroutine

        future: Future[T] = asyncio.run_coroutine_threadsafe(wrapped(), self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise httpx.ReadTimeout("the in-process server did not answer in time") from None

    def client(self, **options: Any) -> httpx.Client:
        """A sync client to the server (close it, or use it in ``with``)."""
        options.setdefault("timeout", TIMEOUT)
        return httpx.Client(transport=_SyncTransport(self), base_url=self.url, **options)

    def start(self) -> None:
        self._thread.start()
        self.call(self._lifespan.startup())

    def stop(self) -> None:
        try:
            self.call(self._lifespan.shutdown())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(TIMEOUT)
            self._loop.close()

    def __enter__(self) -> InProcessServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
