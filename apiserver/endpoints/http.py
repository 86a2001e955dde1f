"""The thin ASGI layer: a parsed request and the ways to answer it. Plain ASGI, no framework, because the
framework's per-request cost would be most of a GET's (see DESIGN.md, "Measured facts")."""

from __future__ import annotations

import asyncio
import re
from collections.abc import (
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl

import orjson

from apiserver.authentication.user import ANONYMOUS, UserInfo
from apiserver.endpoints.output import prefers_protobuf, status_body
from apiserver.endpoints.replay import SCOPE_REPLAY, Replay
from apiserver.machinery.errors import APIError, request_entity_too_large

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SCOPE_USER = "apiforge.user"
"""The scope key of the request's ``UserInfo``, set by the filter chain (authentication, impersonation)."""
SCOPE_REQUEST_INFO = "apiforge.request_info"
"""The scope key of the request's ``routing.RequestInfo``, set first in the filter chain."""
SCOPE_AUDIT_ID = "apiforge.audit_id"
"""The scope key of the request's audit ID (set by the audit init filter, the outermost)."""
SCOPE_AUDIT_EVENT = "apiforge.audit_event"
"""The scope key of the request's ``audit.event.Event`` while one is recorded (set by the audit filter)."""
SCOPE_AUDIT_OBJECT_REF = "apiforge.audit_object_ref"
"""The audited request's objectRef (a dict the audit event holds), for the handler to complete."""
_OBJECT_REF_ORDER = ("resource", "namespace", "name", "apiGroup", "apiVersion", "subresource")
SCOPE_MIN_REQUEST_TIMEOUT = "apiforge.min_request_timeout"
"""The scope key of ``--min-request-timeout`` (seconds), set on long-running requests by the timeout filter:
a watch without ``timeoutSeconds`` lasts between it and twice it."""
DEFAULT_MIN_REQUEST_TIMEOUT = 1800.0  # kube-apiserver's --min-request-timeout default

MAX_BODY_BYTES = (
    3 * 1024 * 1024
)  # kube-apiserver's default request size limit for JSON bodies is 3 MiB
JSON = b"application/json"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode's control characters (category Cc)


class Headers(Mapping[str, str]):
    """A request's headers, decoded (as Latin-1) only when looked up: most requests read one or two of them.
    Names are lowercase, as ASGI gives them (and every filter reads them); of a repeated header the last
    wins."""

    __slots__ = ("_decoded", "_map", "_raw")

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._map: dict[bytes, bytes] | None = None
        """The raw pairs as a dict (the last of a repeated name wins), made at the first lookup: a
        request's handler looks up several (content type, accept, user agent)."""
        self._decoded: dict[str, str] | None = None

    def get(self, key: str, default: Any = None) -> Any:
        found = (self._map or self._mapped()).get(key.encode("latin-1"))
        return default if found is None else bytes(found).decode("latin-1")

    def _mapped(self) -> dict[bytes, bytes]:
        self._map = dict(self._raw)
        return self._map

    def __getitem__(self, key: str) -> str:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return str(found)

    def _all(self) -> dict[str, str]:
        if self._decoded is None:
            self._decoded = {
                bytes(k).decode("latin-1"): bytes(v).decode("latin-1") for k, v in self._raw
            }
        return self._decoded

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]
    receive: Receive
    warnings: list[str] = field(default_factory=list)
    user: UserInfo = ANONYMOUS
    """Who asks, as the filter chain's authentication (and impersonation) found; anonymous where no chain
    runs (an app called directly)."""
    min_request_timeout: float = DEFAULT_MIN_REQUEST_TIMEOUT
    """``--min-request-timeout`` as the filter chain passed it (kube's default where no chain runs)."""
    body_size: int = 0
    """The bytes of the body once read (what decides whether a write's work leaves the event loop)."""
    audit_object_ref: dict[str, str] | None = None
    """The audit event's objectRef when the request is audited (SCOPE_AUDIT_OBJECT_REF)."""
    replay: Replay | None = None
    """The answer as the connection may replay it (SCOPE_REPLAY), when it may."""

    @classmethod
    def from_scope(cls, scope: Scope, receive: Receive) -> Request:
        get = scope.get
        query = get("query_string", b"")
        return cls(  # positionally: keywords cost a dataclass __init__ more
            scope["method"],
            scope["path"],
            parse_query(query) if query else {},
            Headers(scope["headers"]),
            receive,
            [],
            get(SCOPE_USER, ANONYMOUS),
            get(SCOPE_MIN_REQUEST_TIMEOUT, DEFAULT_MIN_REQUEST_TIMEOUT),
            0,
            get(SCOPE_AUDIT_OBJECT_REF),
            get(SCOPE_REPLAY),
        )

    def audit_request_object(self, metadata: dict[str, Any]) -> None:
        """Complete the audit event's objectRef with the request object's name and namespace where the URL
        named none (a create), as kube's audit.LogRequestObject does at every level from Metadata: the
        event of a refused create still says what was to be created."""
        ref = self.audit_object_ref
        if ref is None:
            return
        found = {key: metadata.get(key) for key in ("namespace", "name")}
        added = {key: v for key, v in found.items() if isinstance(v, str) and v and key not in ref}
        if added:
            merged = {**ref, **added}
            ref.clear()
            ref.update((key, merged[key]) for key in _OBJECT_REF_ORDER if key in merged)

    async def body(self) -> bytes:
        message = await self.receive()
        if message["type"] == "http.request" and not message.get("more_body", False):
            # the whole body in one message, as the server hands a body that has arrived whole
            whole: bytes = message.get("body", b"")
            if len(whole) > MAX_BODY_BYTES:
                raise _too_large()
            self.body_size = len(whole)
            return whole
        return await self._body_in_parts(message)

    async def _body_in_parts(self, message: Message) -> bytes:
        """The body from ``message`` on, the messages after it received until the last."""
        chunks: list[bytes] = []
        size = 0
        while True:
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise _too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
            message = await self.receive()
        self.body_size = size
        return b"".join(chunks)

    def flag(self, name: str) -> bool:
        """A boolean query parameter as kube's parameter codec reads it: see query_bool."""
        return query_bool(self.query.get(name))

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _too_large() -> APIError:
    """kube's answer to a body past the limit (413)."""
    return request_entity_too_large(f"Request entity too large: limit is {MAX_BODY_BYTES}")


class Done:
    """An awaitable that is finished already: what a ``send`` that needs no wait hands back, instead of a
    coroutine made and run for nothing."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        yield from ()


DONE = Done()


class Ready:
    """An awaitable whose value is there already: what a ``receive`` that need not wait hands back."""

    __slots__ = ("value",)

    def __init__(self, value: Message) -> None:
        self.value = value

    def __await__(self) -> Generator[None, None, Message]:
        return self.value
        yield  # a generator that never suspends


def transport_of(send: Send) -> Any:
    """The transport under ``send``, or None: uvicorn's send is a bound method of the connection's request
    cycle, which holds it. A filter that wraps ``send`` keeps it reachable by making its wrapper a bound
    method of an object with the same ``transport`` attribute: the watch writer cuts off a client that
    stopped reading through it."""
    return getattr(getattr(send, "__self__", None), "transport", None)


class ChunkStream(Protocol):
    """A started chunked response that framed chunks may be written to directly, skipping the ASGI
    messages: a watch writes every event to every watcher, and a message's checks and framing per write
    cost as much as the write itself."""

    def write_chunk(self, framed: bytes) -> bool:
        """Write one chunk framed by ``frame_chunk`` if the connection takes it without waiting (nothing
        queued in its transport); False, and nothing written, otherwise."""
        ...


def chunk_stream(send: Send) -> ChunkStream | None:
    """The started chunked response under ``send`` when nothing between the handler and the connection
    needs to see its chunks (the server's own send, or a filter's that declares so through a
    ``chunk_stream`` method of its own); None when every chunk must go through ``send``."""
    opener = getattr(getattr(send, "__self__", None), "chunk_stream", None)
    stream: ChunkStream | None = opener() if opener is not None else None
    return stream


def frame_chunk(body: bytes) -> bytes:
    """``body`` as one HTTP/1.1 chunk (RFC 9112 §7.1): its size in hex, CRLF, the bytes, CRLF. Framed once,
    the same bytes go to every watcher of an event."""
    return b"%x\r\n%b\r\n" % (len(body), body)


def query_bool(value: str | None) -> bool:
    """A boolean query parameter as kube's parameter codec converts it (k8s.io/apimachinery/pkg/runtime/
    conversion.go Convert_Slice_string_To_bool and _To_Pointer_bool): absent, ``0`` or any case of
    ``false`` is false, and every other value true, ``watch=maybe`` and an empty one included; never a 400.
    """
    return value is not None and value != "0" and value.lower() != "false"


def parse_query(query_string: bytes) -> dict[str, str]:
    """A query's parameters, the last value of a repeated one winning: one reading for the handlers and the
    filter chain, so that both see the same request."""
    if not query_string:
        return {}
    return dict(parse_qsl(query_string.decode("latin-1"), keep_blank_values=True))


def warning_header(text: str) -> bytes | None:
    """RFC 7234 warning with code 299, the text a valid quoted-string (kubectl drops malformed ones); None for
    a text with a control character, which no header may carry: kube's recorder drops such a warning
    (net.NewWarningHeader refuses it), so the response it rides on is always answerable."""
    if _CONTROL.search(text):
        return None
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'.encode()


def _start(
    status: int,
    length: int,
    content_type: bytes,
    headers: list[tuple[bytes, bytes]] | None,
    warnings: list[str] | None,
) -> Message:
    """The response's start message, shared so that a body sent in parts has exactly respond's headers."""
    all_headers = [(b"content-type", content_type), (b"content-length", str(length).encode())]
    if headers:
        all_headers.extend(headers)
    for text in warnings or ():
        header = warning_header(text)
        if header is not None:
            all_headers.append((b"warning", header))
    return {"type": "http.response.start", "status": status, "headers": all_headers}


WRITE_PIECE = 64 * 1024
"""The most of a body handed to the transport at once while others want the event loop (see ``Contention``):
a larger body then goes out in pieces, one per turn of the loop (encrypting a piece takes ~0.1 ms), each sent
once the transport has taken the last (``send`` waits on its flow control), so that many large responses
written at once delay a probe's answer by a piece each, not by whole bodies."""

ALONE_PIECE = 4 * 1024 * 1024
"""The most of a body handed to the transport at once while nobody else wants the loop, the pieces following
each other without a turn of the loop between them: a LIST of 1,000 CronTabs (1.6 MB) leaves in one write, as
it would from Go (64 KiB pieces with a turn after each, and the worker thread's join, had made it cost 1.7x
the CPU). Still cut, so that a client that stops reading holds its request (and its seats) until it has
read all but about a piece: on loopback the kernel takes a single write of a 10 MB body whole, and the
handler would be done at once."""


@dataclass
class Contention:
    """Whether a large body should give up the event loop between pieces: while requests wait for seats
    (the flow-control queues count them in ``waiting``) or another large body is being written. uvloop does
    not show its ready queue, so these are what says that someone else wants a turn."""

    waiting: int = 0
    writing: int = 0

    def __bool__(self) -> bool:
        return self.waiting > 0 or self.writing > 1


CONTENTION = Contention()
"""The process's one event loop's: what its flow-control queues and large bodies report."""


def respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: bytes = JSON,
    headers: list[tuple[bytes, bytes]] | None = None,
    warnings: list[str] | None = None,
) -> Awaitable[None]:
    """The response, awaited as a whole. A body that leaves in one piece goes through the ``send_whole``
    of ``send``'s object when it has one (the server's cycle, the filters' exchange): one call for the
    start and the body, and no coroutine unless the transport makes it wait."""
    start = _start(status, len(body), content_type, headers, warnings)
    if len(body) > WRITE_PIECE:
        return _send_started(send, start, (body,))
    # the ``send_whole`` of the object whose method ``send`` is, when it has one (another of its methods,
    # such as the exchange's ``send_outer``, has none)
    if getattr(send, "__name__", "") == "send":
        whole = getattr(getattr(send, "__self__", None), "send_whole", None)
        if whole is not None:
            return whole(start, body)  # type: ignore[no-any-return]
    return sent_apart(send, start, body)


WholeSend = Callable[[Message, bytes], Awaitable[None]]
"""``send_whole(start, body)``: a response's start message (given away: the callee may add to its
headers) and its whole body, as ``send`` would take them one after the other."""


async def sent_apart(send: Send, start: Message, body: bytes) -> None:
    """A whole response as its two ASGI messages."""
    await send(start)
    await send({"type": "http.response.body", "body": body})


async def _send_started(send: Send, start: Message, parts: Sequence[bytes]) -> None:
    await send(start)
    await _send_in_pieces(send, parts)


async def respond_parts(
    send: Send,
    status: int,
    parts: Sequence[bytes],
    content_type: bytes = JSON,
    headers: list[tuple[bytes, bytes]] | None = None,
    warnings: list[str] | None = None,
) -> None:
    """``respond`` with a body sent as ``parts`` in order, never joined: a 15 MB list would otherwise be
    copied whole to put its few bytes of head and tail around it. The Content-Length is their total,
    so the parts go out as they are (no chunked encoding)."""
    await _send_started(
        send, _start(status, sum(map(len, parts)), content_type, headers, warnings), parts
    )


async def _send_in_pieces(send: Send, parts: Sequence[bytes]) -> None:
    """The parts in order, the last piece closing the body, cut into pieces of at most ALONE_PIECE bytes,
    or of WRITE_PIECE bytes with a turn of the loop between them while there is contention."""
    pending: bytes | None = None  # held back one step, so that the last piece says more_body False
    CONTENTION.writing += 1
    try:
        for part in parts:
            start = 0
            while start < len(part):
                if pending is not None:
                    await send({"type": "http.response.body", "body": pending, "more_body": True})
                    if CONTENTION:
                        await asyncio.sleep(0)  # the loop's other work before the next piece
                stop = start + (WRITE_PIECE if CONTENTION else ALONE_PIECE)
                pending = part if start == 0 and stop >= len(part) else part[start:stop]
                start = stop
        await send({"type": "http.response.body", "body": pending or b""})
    finally:
        CONTENTION.writing -= 1


async def respond_json(
    send: Send, status: int, payload: Any, warnings: list[str] | None = None
) -> None:
    await respond(send, status, orjson.dumps(payload), warnings=warnings)


async def respond_error(
    send: Send, error: APIError, warnings: list[str] | None = None, accept: str = ""
) -> None:
    """The error's Status, in protobuf when the request's Accept puts protobuf first (as kube negotiates it)."""
    content_type, body = status_body(error.status(), prefers_protobuf(accept))
    # kube's ErrorNegotiated: a Status that says when to retry says it in Retry-After too
    headers = (
        [(b"retry-after", str(error.retry_after_seconds).encode())]
        if error.retry_after_seconds
        else None
    )
    await respond(send, error.code, body, content_type, headers=headers, warnings=warnings)


async def respond_text(send: Send, status: int, text: str) -> None:
    await respond(send, status, text.encode(), b"text/plain; charset=utf-8")
