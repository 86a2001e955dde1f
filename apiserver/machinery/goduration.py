"""Go's duration syntax (time.ParseDuration), which kube's duration flags (``--request-timeout``) and the
``?timeout=`` query parameter are written in."""

from __future__ import annotations

import re

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([^0-9.]*)")


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration (time.ParseDuration: "1m30s", "1.5h", "-2s", "0"); ValueError with Go's
    message otherwise."""
    quoted = f'"{text}"'
    body = text[1:] if text[:1] in ("+", "-") else text
    if body == "0":
        return 0.0
    if not body:
        raise ValueError(f"time: invalid duration {quoted}")
    total, position = 0.0, 0
    while position < len(body):
        match = _PART.match(body, position)
        if match is None:
            raise ValueError(f"time: invalid duration {quoted}")
        number, unit = match.groups()
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += float(number) * _UNITS[unit]
        position = match.end()
    return -total if text.startswith("-") else total
