"""The events' time to live (kube-apiserver's --event-ttl, default one hour): kube attaches every Event write
to an etcd lease of that TTL, so an event disappears an hour after its last report. Here an expiry sweep on
the elected replica does it on every backend: an event whose latest report (lastTimestamp, eventTime,
series.lastObservedTime, else its creation) is older than the TTL is deleted."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import click

from apiserver.machinery import errors
from apiserver.machinery.tasks import cancel_and_wait
from apiserver.registry.store import ListOptions, Store
from apiserver.server.options import duration_flag
from apiserver.storage.interface import StorageError
from builtin.wants import WantsKindOptions, WantsStores

log = logging.getLogger(__name__)

MIN_SWEEP_SECONDS, MAX_SWEEP_SECONDS = 0.1, 60.0


@dataclass(frozen=True, slots=True)
class EventTTL:
    """kube-apiserver's --event-ttl: how long an event is kept after its last report, in seconds."""

    seconds: float = 3600.0


def event_ttl_flags(parsed: Callable[..., None]) -> Callable[..., None]:
    """--event-ttl, the core Events' own serve flag, handed on to ``parsed`` as an ``EventTTL`` in its
    ``kind_options`` (apiserver/server/options.py's KindFlags)."""

    @duration_flag(
        "--event-ttl",
        "1h0m0s",
        "How long an event is kept after its last report (kube-apiserver's flag).",
    )
    @functools.wraps(parsed)
    def with_event_ttl(
        *args: object, event_ttl: float, kind_options: dict[type, object], **kwargs: object
    ) -> None:
        if event_ttl <= 0:
            raise click.UsageError("--event-ttl must be positive")
        parsed(*args, kind_options={**kind_options, EventTTL: EventTTL(event_ttl)}, **kwargs)

    return with_event_ttl


class EventTTLServer(WantsStores, WantsKindOptions, Protocol):
    """The Events' Store and how long an event is kept (--event-ttl)."""


def last_report(event: dict[str, Any]) -> datetime | None:
    """When the event was last reported: the latest of the times it carries."""
    metadata = event.get("metadata") or {}
    candidates = (
        event.get("lastTimestamp"),
        event.get("eventTime"),
        (event.get("series") or {}).get("lastObservedTime"),
        metadata.get("creationTimestamp"),
    )
    times = []
    for value in candidates:
        if isinstance(value, str) and value:
            with contextlib.suppress(ValueError):
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
                times.append(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    return max(times) if times else None


class EventExpiry:
    """Deletes expired events every tenth of the TTL (at most a minute apart)."""

    leader_only = True

    def __init__(self, context: EventTTLServer) -> None:
        self.context = context
        self._task: asyncio.Task[None] | None = None

    @property
    def store(self) -> Store:
        return self.context.store("", "events")

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def _run(self) -> None:
        ttl = self.context.kind_option(EventTTL, EventTTL()).seconds
        interval = min(max(ttl / 10, MIN_SWEEP_SECONDS), MAX_SWEEP_SECONDS)
        while True:
            try:
                await self.sweep(ttl)
            except (errors.APIError, StorageError) as error:
                log.warning("event expiry retries after: %s", error)
            await asyncio.sleep(interval)

    async def sweep(self, ttl: float) -> int:
        """Delete the events reported last more than ``ttl`` seconds ago; returns how many."""
        now = datetime.now(UTC)
        expired = 0
        for event in (await self.store.list(None, ListOptions(any_version=True))).items:
            reported = last_report(event)
            if reported is None or (now - reported).total_seconds() <= ttl:
                continue
            metadata = event["metadata"]
            with contextlib.suppress(errors.APIError):  # gone meanwhile, or changed: next sweep
                await self.store.delete(
                    metadata.get("namespace"),
                    metadata["name"],
                    uid_precondition=metadata.get("uid", ""),
                    version_precondition=metadata.get("resourceVersion", ""),
                )
                expired += 1
        return expired
