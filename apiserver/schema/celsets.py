"""cel-go's sets extension as kube-apiserver enables it (``ext.Sets()``, Kubernetes 1.29+;
github.com/google/cel-go ext/sets.go): ``sets.contains(list, sublist)``, ``sets.equivalent(a, b)`` and
``sets.intersects(a, b)``, comparing items with CEL's equality (``1 == 1.0``, ``true != 1``).

The evaluator reads ``sets.contains(...)`` as the method ``contains`` on a variable ``sets``: contexts bind
it to :data:`ROOT`, and :func:`contains` also answers the standard ``<string>.contains``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

TYPE: Final = "@type"
ROOT: Final = {TYPE: "sets-library"}
"""The value of the ``sets`` variable."""
VARIABLE: Final = "sets"


def cel_equal(left: Any, right: Any) -> bool:
    """CEL's ``==``: numbers compare across int, uint and double; a bool equals only a bool; lists and
    maps compare item by item."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(cel_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(cel_equal(v, right[k]) for k, v in left.items())
    return type(left) is type(right) and bool(left == right)


def _member(item: Any, items: list[Any]) -> bool:
    return any(cel_equal(item, other) for other in items)


def _lists(receiver: Any, *args: Any) -> tuple[list[Any], list[Any]]:
    if receiver != ROOT or len(args) != 2 or not all(isinstance(a, list) for a in args):
        raise TypeError("no such overload")
    return args[0], args[1]


def contains(receiver: Any, *args: Any) -> bool:
    """``sets.contains(list, sublist)``, or the standard ``<string>.contains(<string>)``."""
    if isinstance(receiver, str) and len(args) == 1 and isinstance(args[0], str):
        return args[0] in receiver
    whole, part = _lists(receiver, *args)
    return all(_member(item, whole) for item in part)


def _equivalent(receiver: Any, *args: Any) -> bool:
    left, right = _lists(receiver, *args)
    return all(_member(i, right) for i in left) and all(_member(i, left) for i in right)


def _intersects(receiver: Any, *args: Any) -> bool:
    left, right = _lists(receiver, *args)
    return any(_member(item, right) for item in left)


SETS: Final[dict[str, Callable[..., Any]]] = {
    "contains": contains,
    "equivalent": _equivalent,
    "intersects": _intersects,
}
"""The library's functions, by the name the evaluator calls them by."""
