"""Whether a value passes a schema's OpenAPI validation, answered by checks compiled once per schema node.

Every write is validated and nearly every write is valid, yet kube-openapi's walk (apiserver.schema.openapi)
counts matches and builds field paths for the error it might report. The checks here only say yes or no:
each node's keywords are looked at once, when it is compiled, and a value is walked with no path and no
count. A node whose keywords are rare (``enum``, ``allOf``/``anyOf``/``oneOf``/``not``, property counts,
item counts and uniqueness, a value of another type than declared) is answered by the full walk of that
node, so that a "yes" is always the walk's own answer; a "no" sends the caller to the full walk for the
errors, in kube's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from apiserver.schema.formats import check_format
from apiserver.schema.structural import Schema

__all__ = ["Accept", "Walk", "accepts"]

Accept = Callable[[Any], bool]
Walk = Callable[[Schema, Any], bool]
"""The full walk of one node: True when it finds no error in the value."""

_REMEMBERED_MATCHES: Final = 1024
"""Strings a pattern's node remembers having matched; it starts over when full."""
_REMEMBERED_LENGTH: Final = 256
"""The longest string remembered: the memory stays small, and a long string is rarely repeated."""
_OBJECTS: Final = frozenset({dict})
_INTEGERS: Final = frozenset({int})
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def accepts(s: Schema, walk: Walk) -> Accept:
    """The compiled check of ``s``, kept on it; ``walk`` answers what the check leaves to the full walk."""
    check = s.accepts
    if check is None:
        check = s.accepts = _compile(s, walk)
    return check  # type: ignore[no-any-return]


def _compile(s: Schema, walk: Walk) -> Accept:
    def full(x: Any) -> bool:
        return walk(s, x)

    if s.composed or s.enum is not None or (s.format and not s.checks_format):
        return full  # a format that is not checked still shapes the type check: left to the walk
    typed = s.python_types if s.checks_type else None
    # an object's or an integer's check in one call: the type guard inside, then the value's own checks
    if typed == _OBJECTS and not s.checks_slice:
        return _object(s, walk, full) if s.checks_object else lambda x: type(x) is dict or full(x)
    if typed == _INTEGERS and not s.checks_slice and not s.checks_object and s.multiple_of is None:
        low, high = _int_bounds(s)
        return lambda x: (type(x) is int and low <= x <= high) or full(x)
    scalar = _scalar(s, walk)
    obj = _object(s, walk, full) if s.checks_object else None
    items = _items(s, walk) if s.checks_slice else None

    def check(x: Any) -> bool:
        kind = type(x)
        if typed is not None and kind not in typed:
            # a type error, a null, or an integer in a number field: the walk decides
            return full(x)
        if kind is dict:
            return obj is None or obj(x)
        if kind is list:
            return items is None or items(x)
        if kind is int and not _INT64_MIN <= x <= _INT64_MAX:
            return full(x)  # Go decodes it as a float64: the walk's type check decides
        if kind is str or kind is int or kind is float:
            return scalar is None or scalar(x)
        return kind is bool or full(x)

    return check


def _scalar(s: Schema, walk: Walk) -> Accept | None:
    """A string's length, pattern and format, a number's bounds and factor: the walk's own checks, run
    only where the schema has them."""
    if not (s.checks_strings or s.checks_format or s.checks_numbers):
        return None
    max_length, min_length, pattern = s.max_length, s.min_length, s.pattern
    fmt = s.format if s.checks_format else ""
    numbers = s.checks_numbers
    if isinstance(pattern, str):  # a pattern that does not compile fails every string
        return lambda x: walk(s, x)
    # strings the pattern matched: the same values come back write after write (a schedule, an image
    # reference), and a regular expression is the dearest check of a write's schema
    matched: set[str] = set()

    def check(x: Any) -> bool:
        if isinstance(x, str):
            if max_length is not None and len(x) > max_length:
                return False
            if min_length is not None and len(x) < min_length:
                return False
            if pattern is not None and x not in matched:
                if pattern.search(x) is None:
                    return False
                if len(x) <= _REMEMBERED_LENGTH:
                    if len(matched) >= _REMEMBERED_MATCHES:
                        matched.clear()
                    matched.add(x)
            return not fmt or check_format(fmt, x)
        if numbers:
            return walk(s, x) if s.multiple_of is not None else _bounded(s, x)
        return True

    return check


def _int_bounds(s: Schema) -> tuple[int, int]:
    """The int64s an integer node accepts: ``_bounded``'s truncated bounds, exclusive ones moved in."""
    low, high = _INT64_MIN, _INT64_MAX
    if s.minimum is not None:
        low = max(low, int(s.minimum) + 1 if s.exclusive_minimum else int(s.minimum))
    if s.maximum is not None:
        high = min(high, int(s.maximum) - 1 if s.exclusive_maximum else int(s.maximum))
    return low, high


def _bounded(s: Schema, x: float) -> bool:
    """numberValidator's minimum and maximum (an int64 compares with truncated bounds, as the walk's)."""
    minimum, maximum = s.minimum, s.maximum
    is_int = isinstance(x, int)
    if minimum is not None:
        bound = int(minimum) if is_int else float(minimum)
        if x < bound or (s.exclusive_minimum and x <= bound):
            return False
    if maximum is not None:
        bound = int(maximum) if is_int else float(maximum)
        if x > bound or (s.exclusive_maximum and x >= bound):
            return False
    return True


def _items(s: Schema, walk: Walk) -> Accept:
    if s.min_items is not None or s.max_items is not None or s.unique_items:
        return lambda x: walk(s, x)
    item = accepts(s.items, walk) if s.items is not None else None
    if item is None:
        return lambda _x: True
    return lambda x: all(map(item, x))


def _object(s: Schema, walk: Walk, full: Accept) -> Accept:
    """The members' check; a value that is not a dict is left to ``full``."""
    if s.min_properties is not None or s.max_properties is not None:
        return full
    props = {key: accepts(prop, walk) for key, prop in s.properties.items()}
    # members whose check is their type alone (most scalars) are checked here, without a call
    typed = {key: _only_typed(prop) for key, prop in s.properties.items() if _only_typed(prop)}
    closed = s.additional_properties_allowed is False
    other = accepts(s.additional_properties, walk) if s.additional_properties is not None else None
    required = s.required

    def check(x: Any) -> bool:
        if type(x) is not dict:
            return full(x)
        for key, value in x.items():
            types = typed.get(key)
            if types is not None and type(value) in types:
                continue
            prop = props.get(key)
            if prop is not None:
                if not prop(value):
                    return False
            elif closed or (other is not None and not other(value)):
                return False
        return not required or all(name in x for name in required)

    return check


def _only_typed(s: Schema) -> frozenset[type]:
    """The Python types whose values ``s`` accepts on their type alone (an integer is not one: its
    range is checked), or nothing when it checks more than the type."""
    if (
        not s.checks_type
        or s.format
        or s.composed
        or s.enum is not None
        or s.checks_strings
        or s.checks_numbers
        or s.checks_slice
        or s.checks_object
    ):
        return frozenset()
    return s.python_types - {int}
