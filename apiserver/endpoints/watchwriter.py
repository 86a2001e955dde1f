"""The writing side of a watch stream: event lines (or protobuf frames) rendered once per view, one write per
batch, and the cut-off of a client that stops reading.

kube's watch cache terminates a watcher it cannot deliver to rather than hold its events forever; here a
client that takes nothing from its connection for ``STALL_SECONDS`` while events wait for it is cut off,
and re-watches from the last resourceVersion it saw. "Takes nothing" is judged on every byte not yet
acknowledged by the client (the kernel's send queue plus the transport's buffer), so a slow reader that
keeps reading is never cut off.
"""

from __future__ import annotations

import asyncio
import fcntl
import socket
import struct
import termios
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.endpoints.decode import Target
from apiserver.endpoints.http import ChunkStream, Send, chunk_stream, frame_chunk
from apiserver.endpoints.output import (
    Negotiated,
    Output,
    event_frame,
    render_event_object,
    stream_type,
)
from apiserver.registry.store import WatchEvent
from apiserver.registry.versioning import converted, to_version

STALL_SECONDS = 1.0
# The kernel may buffer up to 4 MiB per loopback socket (tcp_wmem): capped, a stalled watcher's backlog
# reaches the transport's flow control (and the cut-off) sooner, and a thousand stalled watchers cannot
# pin gigabytes of kernel memory.
WATCH_SEND_BUFFER = 256 * 1024
_TCP_FAMILIES = (socket.AF_INET, socket.AF_INET6)
_RESET_ON_CLOSE = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST
# Lines rendered for one event are the same for every watcher asking for the same view of it: render once,
# and frame once the chunk of a write that carries that event alone (the usual write of a fan-out).
_RENDERED: dict[tuple[Any, ...], bytes] = {}
_FRAMED: dict[tuple[Any, ...], bytes] = {}
# A view (what the bytes of an event depend on besides the event) stands in those caches' keys as one object
# hashed by identity: hashing the view itself (a dataclass, an enum) per watcher and event costs more than
# the lookup.
_VIEWS: dict[tuple[Any, ...], object] = {}
_RENDERED_CAPACITY = 4096


class StalledClient(Exception):
    """The client has taken nothing from its stream for STALL_SECONDS."""


class _Connection:
    """The socket under uvicorn's ``send`` (which belongs to the connection's protocol); None parts when the
    ASGI server does not expose them, and the cut-off then falls back to one write waiting too long."""

    def __init__(self, send: Send) -> None:
        self.transport: Any = getattr(getattr(send, "__self__", None), "transport", None)
        sock = self.transport.get_extra_info("socket") if self.transport is not None else None
        self._socket = sock if sock is not None and sock.family in _TCP_FAMILIES else None
        self._fd = -1
        if self._socket is not None:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, WATCH_SEND_BUFFER)
            self._fd = self._socket.fileno()

    def idle(self) -> bool:
        """Nothing waits in the transport's buffer, so a write cannot wait on flow control."""
        return self.transport is not None and not self.transport.get_write_buffer_size()

    def unacknowledged(self) -> int | None:
        """Bytes written but not yet taken by the client, or None when that cannot be known."""
        if self.transport is None:
            return None
        size: int = self.transport.get_write_buffer_size()
        if self._fd >= 0:
            try:
                queued = fcntl.ioctl(self._fd, termios.TIOCOUTQ, b"\0\0\0\0")  # SIOCOUTQ
                size += struct.unpack("i", queued)[0]
            except OSError:
                pass
        return size

    def abort(self) -> None:
        """Reset the connection: a plain close would leave the kernel trying to deliver what is queued
        to a client that takes nothing (an orphaned socket holding its buffer until it times out)."""
        if self._socket is not None:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET_ON_CLOSE)
        if self.transport is not None:
            self.transport.abort()


class WatchWriter:
    """Writes one watch's lines."""

    def __init__(
        self,
        send: Send,
        target: Target,
        negotiated: Negotiated,
        include_object: str,
        sent: Callable[[int], None] = lambda _: None,
    ) -> None:
        self._send = send
        self._sent = sent
        """Told how many events each write carried (bookmarks and errors are not events)."""
        self._connection = _Connection(send)
        self._direct: ChunkStream | None = None
        """The started stream, written to without ASGI messages where the server allows it."""
        self._target = target
        self._negotiated = negotiated
        self._include_object = include_object
        self._view = _view(
            (target.resource.group_resource, target.version.name, negotiated, include_object)
        )
        # a Table's first event carries the columns
        self._table_header_due = negotiated.output is Output.TABLE
        self.last_revision = 0
        """The revision of the last event sent (0: none yet), which a bookmark may carry."""

    async def start(self) -> None:
        """Send the response's head; its chunks then go straight to the connection when they can."""
        headers = [
            (b"content-type", stream_type(self._negotiated)),
            (b"cache-control", b"no-cache, private"),
        ]
        await self._send({"type": "http.response.start", "status": 200, "headers": headers})
        self._direct = chunk_stream(self._send)

    async def events(self, events: list[WatchEvent]) -> None:
        """Everything ready goes out in one write: one wake-up and one syscall per batch."""
        if not events:
            return
        target = self._target
        if target.resource.converter is not None:
            # one conversion review for the batch; a failure ends the watch with kube's error event
            objects = await converted([e.object for e in events], target.resource, target.version)
            events = [
                WatchEvent(e.type, obj, e.revision) for e, obj in zip(events, objects, strict=True)
            ]
        await self.write(b"".join([self._event_line(event) for event in events]))
        self.last_revision = events[-1].revision
        self._sent(len(events))

    @property
    def writes_at_once(self) -> bool:
        """Whether ``events_now`` can ever write: only to a stream the server lets it write to directly."""
        return self._direct is not None

    def events_now(self, events: list[WatchEvent]) -> bool:
        """Write the events at once if the connection can take them without waiting; False (nothing
        written) otherwise. Saves the watch's task a wake-up per event while it is idle: the events
        are rendered and framed once for every watcher of the same view, and each watcher's share is
        the write."""
        direct = self._direct
        if direct is None or self._target.resource.converter is not None:
            return False  # a converter is awaited: the watch's task writes them
        table_header_due = self._table_header_due
        try:
            if len(events) == 1:
                framed = self._framed_event(events[0])
            else:
                framed = frame_chunk(b"".join([self._event_line(event) for event in events]))
            if direct.write_chunk(framed):
                self.last_revision = events[-1].revision
                self._sent(len(events))
                return True
        except BaseException:
            self._table_header_due = table_header_due
            raise
        self._table_header_due = table_header_due
        return False

    async def bookmark(self, initial_events_end: bool = False, processed: int = 0) -> None:
        """A BOOKMARK at the last revision sent, or at ``processed`` (every change up to it has been sent
        or hidden by the selector) when that is later; kopf and client-go end their initial listing at
        the one annotated ``k8s.io/initial-events-end`` (§8.2)."""
        self.last_revision = max(self.last_revision, processed)
        event = bookmark(self._target, str(self.last_revision))
        if initial_events_end:
            event["object"]["metadata"]["annotations"] = {"k8s.io/initial-events-end": "true"}
        await self.write(self.event_bytes("BOOKMARK", event["object"]))

    def event_bytes(self, event_type: str, obj: dict[str, Any]) -> bytes:
        """One event in the stream's framing: a JSON line, or a protobuf frame."""
        if self._negotiated.protobuf:
            return event_frame(event_type, obj, self._negotiated, self._target)
        return line({"type": event_type, "object": obj})

    async def write(self, body: bytes) -> None:
        """``body`` as one chunk: at once when the connection takes it without waiting, else through
        ``send``, watched for a client that stopped reading."""
        direct = self._direct
        if direct is not None and direct.write_chunk(frame_chunk(body)):
            return
        message = {"type": "http.response.body", "body": body, "more_body": True}
        if self._connection.idle():
            await self._send(message)
            return
        await self._write_watched(message)

    async def _write_watched(self, message: dict[str, Any]) -> None:
        """Send while the client keeps taking bytes; cut it off once it takes nothing for STALL_SECONDS."""
        sending = asyncio.ensure_future(self._send(message))
        waiting = self._connection.unacknowledged()
        try:
            while True:
                done, _ = await asyncio.wait({sending}, timeout=STALL_SECONDS)
                if done:
                    sending.result()
                    return
                still_waiting = self._connection.unacknowledged()
                if waiting is not None and still_waiting is not None and still_waiting < waiting:
                    waiting = still_waiting
                    continue
                self._connection.abort()
                raise StalledClient
        finally:
            sending.cancel()  # a no-op once sent; else (cut off, or this task cancelled) stop waiting

    def _key(self, event: WatchEvent) -> tuple[Any, ...]:
        """What the bytes of an event depend on: the event, this watch's view of it, and whether it is
        the Table's first (which carries the columns, and is due no more once keyed)."""
        metadata = event.object.get("metadata", {})
        table_header = self._table_header_due
        self._table_header_due = False
        return (
            metadata.get("namespace"),
            metadata.get("name"),
            event.revision,
            event.type,
            self._view,
            table_header,
        )

    def _framed_event(self, event: WatchEvent) -> bytes:
        """One event's chunk, framed once for every watcher of the same view."""
        key = self._key(event)
        framed = _FRAMED.get(key)
        if framed is None:
            framed = _remember(_FRAMED, key, frame_chunk(self._rendered(event, key)))
        return framed

    def _event_line(self, event: WatchEvent) -> bytes:
        key = self._key(event)
        return self._rendered(event, key)

    def _rendered(self, event: WatchEvent, key: tuple[Any, ...]) -> bytes:
        """The event's line (or protobuf frame), rendered once for every watcher of the same view."""
        rendered = _RENDERED.get(key)
        if rendered is None:
            target = self._target
            versioned = to_version(event.object, target.resource, target.version)
            if self._negotiated.protobuf:
                rendered = event_frame(event.type, versioned, self._negotiated, target)
            else:
                shown = render_event_object(
                    versioned, self._negotiated, target, self._include_object, key[-1]
                )
                rendered = line({"type": event.type, "object": shown})
            _remember(_RENDERED, key, rendered)
        return rendered


def _view(view: tuple[Any, ...]) -> object:
    """The object that stands for ``view`` in the caches' keys: the same for every watch of that view
    (a new one after the table of views was emptied, which only costs renders)."""
    found = _VIEWS.get(view)
    if found is None:
        if len(_VIEWS) >= _RENDERED_CAPACITY:
            _VIEWS.clear()
        found = _VIEWS[view] = object()
    return found


def _remember(cache: dict[tuple[Any, ...], bytes], key: tuple[Any, ...], value: bytes) -> bytes:
    """Keep ``value`` for the other watchers of the same view; the cache is emptied when full."""
    if len(cache) >= _RENDERED_CAPACITY:
        cache.clear()
    cache[key] = value
    return value


def bookmark(target: Target, revision: str) -> dict[str, Any]:
    return {
        "type": "BOOKMARK",
        "object": {
            "kind": target.resource.kind,
            "apiVersion": target.api_version,
            "metadata": {"resourceVersion": revision},
        },
    }


def line(payload: dict[str, Any]) -> bytes:
    return orjson.dumps(payload) + b"\n"
