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
                    await _send_line(send, _bookmark(target, last_revision))
                continue
            item = getter.result()
            if item is _END:
                break
            if isinstance(item, _InitialEventsEnd):
                # kopf and client-go end their initial listing at this bookmark (API-CONVENTIONS.md §8.2)
                last_revision = str(item.revision)
                bookmark = _bookmark(target, last_revision)
                bookmark["object"]["metadata"]["annotations"] = {
                    "k8s.io/initial-events-end": "true"
                }
                await _send_line(send, bookmark)
                continue
            if isinstance(item, errors.APIError):
                await _send_line(send, {"type": "ERROR", "object": item.status()})
                break
            event: WatchEvent = item
            last_revision = str(event.revision)
            versioned = to_version(event.object, target.resource, target.version)
            include_object = request.query.get("includeObject", "")
            shown = render_event_object(versioned, output, target, include_object, first_event)
            first_event = False
            await _send_line(send, {"type": event.type, "object": shown})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        producer.cancel()
        gone.cancel()
        await asyncio.wait([producer])  # its storage watch is closed once it returns


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


async def _send_line(send: Send, payload: dict[str, Any]) -> None:
    await send(
        {"type": "http.response.body", "body": orjson.dumps(payload) + b"\n", "more_body": True}
    )
