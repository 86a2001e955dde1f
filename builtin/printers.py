"""Cells every built-in printer shares (kube's pkg/printers/internalversion): an object's age and creation time.

A cell function takes the object (in the version the table is asked in) and the time of the request, and
returns what kube's printer puts in that cell; definitions name them in ``printerColumns[].cell``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from apiserver.endpoints.tablecells import InvalidTime, parse_time, since


def age(obj: dict[str, Any], now: datetime) -> str:
    """translateTimestampSince(creationTimestamp): ``5m``, ``<unknown>`` for an object without one."""
    return since(obj.get("metadata", {}).get("creationTimestamp"), now)


def created_at(obj: dict[str, Any], now: datetime) -> str:
    """Roles' CREATED AT: the creation time in UTC, RFC 3339 to the second (``time.RFC3339`` in Go)."""
    timestamp = obj.get("metadata", {}).get("creationTimestamp")
    try:
        created = parse_time(timestamp) if isinstance(timestamp, str) else None
    except InvalidTime:
        created = None
    moment = created or datetime(1, 1, 1, tzinfo=UTC)  # Go formats the zero time too
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
