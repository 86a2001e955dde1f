"""Watch streams: one JSON event per line (or, when the client asks for protobuf, one length-prefixed
metav1.WatchEvent frame) over a chunked response, flushed per event (API-CONVENTIONS.md §8).

``resourceVersion`` unset or "0" starts with a synthetic ADDED per existing object; "N" replays every change
after N. A history that no longer reaches N ends the stream with an ERROR event carrying a 410 Expired Status.
Bookmarks are sent when asked for, every ``BOOKMARK_INTERVAL`` seconds, since kopf drops a stream that stays
silent for 70 s. A client that stops reading is cut off after ``STALL_SECONDS``; it re-watches from the last
resourceVersion it saw.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable

from apiserver.endpoints.decode import Target
from apiserver.endpoints.http import Request, Send
from apiserver.endpoints.output import Negotiated
from apiserver.endpoints.watchwriter import StalledClient, WatchWriter
from apiserver.machinery import errors
from apiserver.registry.store import (
    WATCH_BATCH,
    ListOptions,
    Predicate,
    Store,
    StoreWatch,
    WatchEvent,
    parse_resource_version,
)
from apiserver.storage.interface import StorageError

log = logging.getLogger(__name__)

# kopf drops a stream silent for 70 s; tests shorten this through the environment to observe bookmarks.
BOOKMARK_INTERVAL = float(os.environ.get("APIFORGE_BOOKMARK_INTERVAL_SECONDS", "30"))


async def serve_watch(
    request: Request,
    send: Send,
    store: Store,
    target: Target,
    predicate: Predicate | None,
    negotiated: Negotiated,
    sent: Callable[[int], None],
) -> None:
    """Stream the watch; ``sent`` counts the events written (apiserver_watch_events_total)."""
    deadline = asyncio.get_running_loop().time() + _timeout(
        request.query.get("timeoutSeconds", ""), request.min_request_timeout
    )
    # a malformed resourceVersion is a 400 before the stream starts, as kube answers it
    resource_version = request.query.get("resourceVersion", "")
    start = None if resource_version in ("", "0") else parse_resource_version(resource_version)
    writer = WatchWriter(send, target, negotiated, request.query.get("includeObject", ""), sent)
    if start is not None:
        writer.last_revision = start  # what the client has seen: a bookmark may say so
    await writer.start()
    gone = asyncio.create_task(_disconnected(request))
    try:
        await _stream(request, store, target, predicate, start, deadline, writer, gone)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except StalledClient:
        log.info("watch of %s cut off: the client stopped reading", target.resource.plural)
        # the aborted connection is lost: wait for uvicorn to see it, and the response is over
        await asyncio.wait([gone], timeout=1)
    finally:
        gone.cancel()


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _stream(
    request: Request,
    store: Store,
    target: Target,
    predicate: Predicate | None,
    start: int | None,
    deadline: float,
    writer: WatchWriter,
    gone: asyncio.Task[None],
) -> None:
    """Write the events until the deadline, the client leaving, or the end of the watch.

    The synthetic ADDED events for the current state come first when asked for (no starting revision, or
    ``sendInitialEvents``), then every change after the starting revision. One task per watcher that
    sleeps until its store watch has events or a timer (bookmark, deadline) or the client's departure
    pokes it, then writes everything ready in one chunk.
    """
    try:
        initial: list[WatchEvent] | None = None
        if start is None or request.flag("sendInitialEvents"):
            page = await store.list(target.namespace, ListOptions(predicate, any_version=True))
            initial = [WatchEvent("ADDED", obj, page.revision) for obj in page.items]
            start = page.revision
        # subscribed before the initial events go out: later changes queue meanwhile, however long a
        # slow client takes to read a large initial state
        changes = store.open_watch(target.namespace, start, predicate)
        try:
            if initial is not None:
                for offset in range(0, len(initial), WATCH_BATCH):
                    await writer.events(initial[offset : offset + WATCH_BATCH])
                writer.last_revision = start
                if request.flag("sendInitialEvents"):
                    await writer.bookmark(initial_events_end=True)
            await _follow(request, changes, deadline, writer, gone)
        finally:
            await changes.close()
    except errors.APIError as error:
        await writer.write(writer.event_bytes("ERROR", error.status()))
    except StorageError as error:
        # the storage watch under this one ended (a slow watcher cut off, the watch cache restarting):
        # end the stream, and the client re-watches from the last revision it saw
        log.info("watch of %s ended: %s", target.resource.plural, error)
    except StalledClient:
        raise
    except Exception:  # a bug: end the stream rather than leave the client waiting
        log.exception("watch of %s failed", target.resource.plural)


async def _follow(
    request: Request,
    changes: StoreWatch,
    deadline: float,
    writer: WatchWriter,
    gone: asyncio.Task[None],
) -> None:
    bookmarks = request.flag("allowWatchBookmarks")
    alarm = None
    try:
        if writer.writes_at_once:
            changes.listen(writer.events_now)
        gone.add_done_callback(lambda _: changes.poke())
        alarm = _Alarm(asyncio.get_running_loop(), changes.poke, deadline)
        while not gone.done():
            batch = await changes.batch(WATCH_BATCH)
            if batch is None:
                return
            if batch:
                await writer.events(batch)
            if alarm.rung:
                if alarm.deadline_reached:
                    return
                if bookmarks:
                    await writer.bookmark(processed=changes.processed_revision)
                alarm.arm()
    finally:
        if alarm is not None:
            alarm.cancel()


class _Alarm:
    """Pokes a watch at the next bookmark time or at its deadline, whichever comes first: a timer per
    bookmark interval, none per event."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, poke: Callable[[], None], deadline: float
    ) -> None:
        self._loop = loop
        self._poke = poke
        self._deadline = deadline
        self.rung = False
        self.deadline_reached = False
        self._handle: asyncio.TimerHandle | None = None
        self.arm()

    def arm(self) -> None:
        """Ring after the next bookmark interval, or at the deadline when that is sooner."""
        self.rung = False
        when = self._loop.time() + BOOKMARK_INTERVAL
        self.deadline_reached = when >= self._deadline
        self._handle = self._loop.call_at(min(when, self._deadline), self._ring)

    def _ring(self) -> None:
        self.rung = True
        self._poke()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


def _timeout(text: str, min_request_timeout: float) -> float:
    """The stream's lifetime: ``timeoutSeconds`` (an int64, as kube's), else (or for 0, as kube's watch
    handler treats it) kube's random one in [--min-request-timeout, twice it) (request.GetTimeoutForWatch:
    ``minRequestTimeout * (rand.Float64() + 1.0)``)."""
    invalid = errors.bad_request(f"invalid timeoutSeconds: {text!r}")
    try:
        seconds = int(text) if text else 0
    except ValueError:
        raise invalid from None
    if not -_INT64_END <= seconds < _INT64_END:
        raise invalid
    if seconds:
        return float(min(seconds, _LONGEST))
    # kube sets no deadline when --min-request-timeout is 0
    return min_request_timeout * (1.0 + random.random()) if min_request_timeout else _LONGEST


_INT64_END = 2**63
_LONGEST = 366 * 24 * 3600  # a year: the event loop's timers overflow long before int64 seconds do
