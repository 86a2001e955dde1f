"""Watch streams: one JSON event per line over a chunked response, flushed per event (API-CONVENTIONS.md §8).

``resourceVersion`` unset or "0" starts with a synthetic ADDED per existing object; "N" replays every change
after N. A history that no longer reaches N ends the stream with an ERROR event carrying a 410 Expired Status.
Bookmarks are sent when asked for, at least every ``BOOKMARK_INTERVAL`` seconds, since kopf drops a stream that
stays silent for 70 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import orjson

from apiserver import errors
from apiserver.endpoints.decode import Target
from apiserver.endpoints.http import Request, Send
from apiserver.endpoints.output import Output, render_event_object, stream_type
from apiserver.endpoints.versioning import to_version
from apiserver.registry.store import (
    ListOptions,
    Predicate,
    Store,
    WatchEvent,
    parse_resource_version,
)
from apiserver.storage.interface import StorageError

log = logging.getLogger("apiforge")

# kopf drops a stream silent for 70 s; tests shorten this through the environment to observe bookmarks.
BOOKMARK_INTERVAL = float(os.environ.get("APIFORGE_BOOKMARK_INTERVAL_SECONDS", "30"))
DEFAULT_TIMEOUT = (
    1800.0,
    3600.0,
)  # kube-apiserver picks a random watch lifetime in [30 min, 60 min)
_END = object()


@dataclass(frozen=True, slots=True)
class _InitialEventsEnd:
    """Marks the end of the initial state in a `sendInitialEvents=true` watch."""

    revision: int


async def _events(
    store: Store,
    target: Target,
    predicate: Predicate | None,
    start: int | None,
    initial_events: bool,
) -> AsyncGenerator[Any, None]:
    """The synthetic ADDED events for the current state when asked for (no starting revision, or
    `sendInitialEvents`), then every change after the starting revision."""
    if initial_events or start is None:
        page = await store.list(target.namespace, ListOptions(predicate, any_version=True))
        for obj in page.items:
            yield WatchEvent("ADDED", obj, page.revision)
        start = page.revision
        if initial_events:
            yield _InitialEventsEnd(start)
    async with contextlib.aclosing(store.watch(target.namespace, start, predicate)) as changes:
        async for event in changes:
            yield event


async def serve_watch(
    request: Request,
    send: Send,
    store: Store,
    target: Target,
    predicate: Predicate | None,
    output: Output,
) -> None:
    bookmarks = request.flag("allowWatchBookmarks")
    timeout = _timeout(request.query.get("timeoutSeconds", ""))
    # a malformed resourceVersion is a 400 before the stream starts, as kube answers it
    resource_version = request.query.get("resourceVersion", "")
    start = None if resource_version in ("", "0") else parse_resource_version(resource_version)
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=1024)
    last_revision = str(await store.current_revision())

    async def produce() -> None:
        """Queue the events, then _END. Not after a cancel: the consumer has gone then, and putting _END
        into a full queue would wait forever (and with it the request)."""
        try:
            events = _events(store, target, predicate, start, request.flag("sendInitialEvents"))
            async with contextlib.aclosing(events):
                async for event in events:
                    await queue.put(event)
        except errors.APIError as error:
            await queue.put(error)
        except StorageError as error:
            # the storage watch under this one ended (a slow watcher cut off, the watch cache restarting):
            # end the stream, and the client re-watches from the last revision it saw
            log.info("watch of %s ended: %s", target.resource.plural, error)
        except Exception:  # a bug: end the stream rather than leave the client waiting
            log.exception("watch of %s failed", target.resource.plural)
        await queue.put(_END)

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    headers = [
        (b"content-type", stream_type(output)),
        (b"cache-control", b"no-cache, private"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    producer = asyncio.create_task(produce())
    gone = asyncio.create_task(disconnected())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    first_event = True
    include_object = request.query.get("includeObject", "")
    try:
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait(
                {getter, gone},
                timeout=min(remaining, BOOKMARK_INTERVAL),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if gone in done:
                getter.cancel()
                return
            if getter not in done:
                getter.cancel()
                if bookmarks:
                    await _write(send, _line(_bookmark(target, last_revision)))
                continue
            # everything already queued goes out in one write: one wake-up and one syscall per batch
            batch = [getter.result()]
            while len(batch) < MAX_BATCH and not queue.empty():
                batch.append(queue.get_nowait())
            chunks: list[bytes] = []
            finished = False
            for item in batch:
                if item is _END:
                    finished = True
                    break
                if isinstance(item, _InitialEventsEnd):
                    # kopf and client-go end their initial listing at this bookmark (§8.2)
                    last_revision = str(item.revision)
                    bookmark = _bookmark(target, last_revision)
                    bookmark["object"]["metadata"]["annotations"] = {
                        "k8s.io/initial-events-end": "true"
                    }
                    chunks.append(_line(bookmark))
                    continue
                if isinstance(item, errors.APIError):
                    chunks.append(_line({"type": "ERROR", "object": item.status()}))
                    finished = True
                    break
                event: WatchEvent = item
                last_revision = str(event.revision)
                chunks.append(_event_line(event, target, output, include_object, first_event))
                first_event = False
            if chunks:
                await _write(send, b"".join(chunks))
            if finished:
                break
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except _StalledClient:
        log.info("watch of %s cut off: the client stopped reading", target.resource.plural)
    finally:
        producer.cancel()
        gone.cancel()
        await asyncio.wait([producer])  # its storage watch is closed once it returns


MAX_BATCH = 256
WRITE_TIMEOUT_SECONDS = 5.0  # a client that takes nothing for this long has stopped reading
# Lines rendered for one event are the same for every watcher asking for the same view of it: render once.
_RENDERED: dict[tuple[Any, ...], bytes] = {}
_RENDERED_CAPACITY = 4096


def _event_line(
    event: WatchEvent, target: Target, output: Output, include_object: str, first: bool
) -> bytes:
    metadata = event.object.get("metadata", {})
    key = (
        target.resource.group_resource,
        metadata.get("namespace"),
        metadata.get("name"),
        event.revision,
        event.type,
        target.version.name,
        output,
        include_object,
        first and output is Output.TABLE,  # only a Table's first event carries column definitions
    )
    line = _RENDERED.get(key)
    if line is None:
        versioned = to_version(event.object, target.resource, target.version)
        shown = render_event_object(versioned, output, target, include_object, first)
        line = _line({"type": event.type, "object": shown})
        if len(_RENDERED) >= _RENDERED_CAPACITY:
            _RENDERED.clear()
        _RENDERED[key] = line
    return line


class _StalledClient(Exception):
    """The client has not taken a write for WRITE_TIMEOUT_SECONDS."""


async def _write(send: Send, body: bytes) -> None:
    """Send one chunk; a client that stops reading is cut off instead of holding the stream (and its
    buffered events) forever, as kube's watch cache terminates a watcher it cannot deliver to."""
    message = {"type": "http.response.body", "body": body, "more_body": True}
    try:
        async with asyncio.timeout(WRITE_TIMEOUT_SECONDS):  # unlike wait_for, no task per write
            await send(message)
    except TimeoutError:
        # uvicorn's send belongs to the connection's protocol; abort() drops the socket without the flush
        # that close() would wait for (the peer's receive window is full)
        transport = getattr(getattr(send, "__self__", None), "transport", None)
        if transport is not None:
            transport.abort()
        raise _StalledClient from None


def _timeout(text: str) -> float:
    """The stream's lifetime: ``timeoutSeconds`` (an integer, as kube's int64), else kube's random one."""
    if not text:
        return random.uniform(*DEFAULT_TIMEOUT)
    try:
        return float(int(text))
    except ValueError:
        raise errors.bad_request(f"invalid timeoutSeconds: {text!r}") from None


def _bookmark(target: Target, revision: str) -> dict[str, Any]:
    return {
        "type": "BOOKMARK",
        "object": {
            "kind": target.resource.kind,
            "apiVersion": target.api_version,
            "metadata": {"resourceVersion": revision},
        },
    }


def _line(payload: dict[str, Any]) -> bytes:
    return orjson.dumps(payload) + b"\n"
