"""events.k8s.io/v1 Event's table cells: kube prints the internal core Event whichever group is asked
(pkg/registry/events serves core's storage and its TableConvertor, pkg/printers/internalversion printEvent),
so these are core's cells (builtin.core.printers) read through core's field names."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from builtin.core import printers
from builtin.events.conversion import core_view


def event_last_seen(obj: dict[str, Any], now: datetime) -> str:
    """LAST SEEN: the series' last observation, else deprecatedLastTimestamp, else when first seen."""
    return printers.event_last_seen(core_view(obj), now)


def event_first_seen(obj: dict[str, Any], now: datetime) -> str:
    """FIRST SEEN: deprecatedFirstTimestamp, else eventTime."""
    return printers.event_first_seen(core_view(obj), now)


def event_count(obj: dict[str, Any], now: datetime) -> int:
    """COUNT: the series' count, else deprecatedCount, 1 for a singleton."""
    return printers.event_count(core_view(obj), now)


def event_object(obj: dict[str, Any], now: datetime) -> str:
    """OBJECT: ``kind/name`` of the regarding object, the kind lower-cased."""
    return printers.event_object(core_view(obj), now)


def event_subobject(obj: dict[str, Any], now: datetime) -> str:
    """SUBOBJECT: the regarding object's fieldPath, "" when unset."""
    return printers.event_subobject(core_view(obj), now)


def event_source(obj: dict[str, Any], now: datetime) -> str:
    """SOURCE: deprecatedSource, else reportingController and reportingInstance."""
    return printers.event_source(core_view(obj), now)


def event_message(obj: dict[str, Any], now: datetime) -> str:
    """MESSAGE: the note without surrounding white space."""
    return printers.event_message(core_view(obj), now)
