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
_DURATION_PART = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration (time.ParseDuration: "1m30s", "1.5h", "-2s", "0"); ValueError with Go's
    message otherwise."""
    invalid = ValueError(f'time: invalid duration "{text}"')
    body = text[1:] if text[:1] in ("+", "-") else text
    if body == "0":
        return 0.0
    if not body:
        raise invalid
    total, position = 0.0, 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            raise invalid
        total += float(match[1]) * _UNITS[match[2]]
        position = match.end()
    return -total if text.startswith("-") else total
