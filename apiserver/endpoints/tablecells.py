"""Table cells as kube-apiserver renders them: the CRD table convertor's cells of a JSONPath column
(apiextensions-apiserver pkg/registry/customresource/tableconvertor) and the ages of apimachinery's
``duration.HumanDuration``, which built-in printers share (pkg/printers/internalversion).

kubectl prints what the server sends, so these decide what a user reads: ``["foo.com"]`` and ``{"app":"web"}``
(Go's JSON, as ``schema.causes`` writes it for kube's messages), ``3`` for an integer column holding 3.7, ``<invalid>`` for a date that is no RFC 3339 time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from apiserver.schema.causes import go_json, go_value

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)
# Go's float64 writes integral values without a fraction; below this bound they are ints in Python too.
_EXACT_FLOAT = 1e21


class InvalidTime(ValueError):
    """A timestamp that is not RFC 3339 (metav1.Time.UnmarshalQueryParameter refuses it)."""


def human_duration(seconds: float) -> str:
    """kube's duration.HumanDuration: the compact ages kubectl shows (5m, 3h12m, 2d); a time more than a second
    ahead of the server's clock is ``<invalid>``."""
    whole = int(seconds)  # Go's int(d.Seconds()) truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    minutes, hours = whole // 60, whole // 3600
    days = hours // 24
    if whole < 120:
        return f"{whole}s"
    if minutes < 10:
        return f"{minutes}m" if whole % 60 == 0 else f"{minutes}m{whole % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d" if hours % 24 == 0 else f"{days}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        return f"{years}y" if days % 365 == 0 else f"{years}y{days % 365}d"
    return f"{years}y"


def parse_time(text: str) -> datetime | None:
    """metav1.Time's query-parameter form: RFC 3339 (fractional seconds allowed); "" and "null" are the zero
    time (None)."""
    if text in ("", "null"):
        return None
    if _RFC3339.fullmatch(text) is None:
        raise InvalidTime(text)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:  # a well-formed but impossible date, such as month 13
        raise InvalidTime(text) from error
    return None if parsed == _ZERO_TIME else parsed


def since(timestamp: Any, now: datetime) -> str:
    """translateTimestampSince: the age of an object's timestamp, ``<unknown>`` when it has none."""
    if not isinstance(timestamp, str):
        return "<unknown>"
    try:
        then = parse_time(timestamp)
    except InvalidTime:
        return "<invalid>"
    if then is None:
        return "<unknown>"
    return human_duration((now - then).total_seconds())


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)  # Go's int64(f) truncates toward zero
    return None


def _number(value: Any) -> int | float | None:
    """A number cell; integral values stay ints so that they are written as Go writes float64 42 (``42``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if float(value).is_integer() and abs(value) < _EXACT_FLOAT:
        return int(value)
    return float(value)


def _date(value: Any, now: datetime) -> str | None:
    return since(value, now) if isinstance(value, str) else None


def cell_for_json_value(column_type: str, value: Any, now: datetime) -> Any:
    """tableconvertor's cellForJSONValue: a non-string column's cell, None when the value is not of its type."""
    if value is None:
        return None
    if column_type == "integer":
        return _integer(value)
    if column_type == "number":
        return _number(value)
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "string":
        return value if isinstance(value, str) else None
    if column_type == "date":
        return _date(value, now)
    return None


def go_text(value: Any) -> str:
    """client-go JSONPath's text of one value (PrintResults): Go's JSON for maps and slices, ``fmt.Print``
    for scalars, and text/template's ``<no value>`` for a null."""
    if value is None:
        return "<no value>"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return go_value(value)
    return go_json(value)


def json_path_cell(column_type: str, values: list[Any], now: datetime) -> Any:
    """A JSONPath column's cell from everything its path found. A string column prints the value as client-go's
    JSONPath prints it, several matches squashed into one JSON list; other types take the first match."""
    if not values:
        return None
    if column_type == "string":
        return go_text(values if len(values) > 1 else values[0])
    return cell_for_json_value(column_type, values[0], now)
