"""The bounds every request body meets when it is parsed: nesting depth, and size after decoding.

Depth is bounded once, at decode, so that nothing downstream (merge patch, strategic merge patch, JSON patch
values, apply, managedFields, pruning, validation, CEL, the JSON and YAML encoders) can recurse deeper. kube's
decoders stop at 10,000 levels (Go's encoding/json ``maxNestingDepth``, copied into sigs.k8s.io/json; go-yaml's
``max_flow_level``/``max_indents``), which Python cannot follow: orjson refuses to encode past 254 levels and
Python's recursion limit is 1,000 frames. :data:`MAX_DEPTH` leaves room under orjson's limit for what wraps a
stored object when it is served (a List's ``items``, a watch event, a Table row, ``managedFields.fieldsV1``
mirroring the object's own depth four levels down); every stage of a real server was measured to handle 230
levels. No Kubernetes object comes close: a CRD whose schema nests 40 structs is about 90 levels deep.

Size is bounded on the wire (``MaxRequestBodyBytes``, 3 MiB, endpoints/http.py); JSON cannot grow when it is
decoded, YAML can (aliases), so the YAML reader (``kubeyaml``) bounds what aliases add with the same figure.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_DEPTH",
    "DecodedTooLarge",
    "TooDeep",
    "depth_exceeds",
    "depth_of",
    "load_json",
]

MAX_DEPTH: Final = 200
"""The deepest nesting of objects and arrays a body may have (the root object is level 1)."""

MAX_DECODED_BYTES: Final = 3 * 1024 * 1024
"""kube's ``MaxRequestBodyBytes`` (k8s.io/apiserver pkg/server/config.go ``NewConfig``), applied to a body after
decoding as well: what YAML aliases expand to may not exceed what the wire would have taken."""


class TooDeep(orjson.JSONDecodeError):
    """A body nested deeper than :data:`MAX_DEPTH`. A JSON decode error, so that every caller that answers
    a malformed body with 400 answers this one too. The message is Go's scanner's (encoding/json
    ``pushParseState``: ``invalid character '[' exceeded max depth``), which kube sends for 10,001 levels."""

    def __init__(self, opening: str) -> None:
        super().__init__(f"invalid character '{opening}' exceeded max depth", "", 0)

    def __str__(self) -> str:
        return self.msg


class DecodedTooLarge(ValueError):
    """A body whose decoded form exceeds :data:`MAX_DECODED_BYTES`: kube's 413, whose Status message is
    ``errors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))`` (handlers/rest.go
    ``limitedReadBody``)."""

    code: Final = 413
    reason: Final = "RequestEntityTooLarge"

    def __init__(self, limit: int = MAX_DECODED_BYTES) -> None:
        self.message = f"Request entity too large: limit is {limit}"
        super().__init__(self.message)


def load_json(body: bytes | str) -> Any:
    """``orjson.loads`` with the depth bound: raises ``orjson.JSONDecodeError`` (:class:`TooDeep` past
    :data:`MAX_DEPTH`) for a body that isn't JSON kube would accept."""
    value = orjson.loads(body)
    # A document holding fewer brackets than the bound cannot nest deeper than it: counting them is
    # C-speed, so most bodies skip the walk (brackets inside strings only make the count larger). One
    # pass keeps the brackets alone (two counts took twice as long: 1.7 µs for a 1.4 KiB body).
    raw = body.encode() if isinstance(body, str) else body
    if len(raw) > MAX_DEPTH and len(raw.translate(None, _ALL_BUT_BRACKETS)) > MAX_DEPTH:
        opening = depth_exceeds(value, MAX_DEPTH)
        if opening is not None:
            raise TooDeep(opening)
    return value


_ALL_BUT_BRACKETS: Final = bytes(c for c in range(256) if c not in b"[{")
"""What ``bytes.translate`` deletes to leave a body's opening brackets."""


def depth_exceeds(value: Any, limit: int) -> str | None:
    """The opening bracket (``[`` or ``{``) of a container nested deeper than ``limit`` in ``value``, or
    None when there is none. Asks orjson's encoder first (C-speed, see :func:`_fits`); only a value it
    cannot vouch for is walked, one level at a time, so that the walk cannot run out of stack."""
    if _fits(value, limit):
        return None
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        if not level:
            return None
        level = _below(level)
    if not level:
        return None
    return "{" if isinstance(level[0], dict) else "["


def _encoder_depth() -> int:
    """The deepest nesting orjson encodes (it raises "Recursion limit reached" past it; 254 in orjson 3),
    found once; 0 when none was found up to 10,000 levels."""
    value: Any = []
    for depth in range(1, 10_001):
        try:
            orjson.dumps(value)
        except TypeError:
            return depth - 1
        value = [value]
    return 0


_ENCODER_DEPTH: Final = _encoder_depth()


def _fits(value: Any, limit: int) -> bool:
    """Whether ``value`` surely nests at most ``limit`` deep: orjson encodes it inside as many arrays as
    take its encoder to its own limit. Several times faster than any walk in Python, and most values fit."""
    spare = _ENCODER_DEPTH - limit
    if spare < 0:
        return False
    wrapped = value
    for _ in range(spare):
        wrapped = [wrapped]
    try:
        orjson.dumps(wrapped)
    except TypeError:  # too deep (or not JSON at all: the walk decides)
        return False
    return True


def depth_of(value: Any) -> int:
    """How deep ``value`` nests: 0 for a scalar, 1 for ``{}``."""
    depth = 0
    level = [value] if isinstance(value, dict | list) else []
    while level:
        depth += 1
        level = _below(level)
    return depth


def _below(level: list[Any]) -> list[Any]:
    """The containers directly inside those of ``level``."""
    return [
        child
        for container in level
        for child in (container.values() if isinstance(container, dict) else container)
        if isinstance(child, dict | list)
    ]
