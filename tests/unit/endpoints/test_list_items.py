"""A built-in kind's list items carry no apiVersion or kind, as kube's typed lists encode them (only the list
names its kind); both the rendered items the watch cache hands over and items rendered otherwise."""

from __future__ import annotations

import orjson
import pytest

from apiserver.endpoints.output import joined_untyped

ITEMS = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}},
    {"metadata": {"name": "b"}, "kind": "ConfigMap", "data": {"k": "v"}, "apiVersion": "v1"},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
]
UNTYPED = [
    {"metadata": {"name": "a"}, "data": {"k": "v"}},
    {"metadata": {"name": "b"}, "data": {"k": "v"}},
    {"metadata": {"name": "c"}},
]


@pytest.mark.parametrize(
    "order",
    [[0], [1], [0, 2], [1, 0, 2], [0, 1]],
    ids=["first", "in another order", "all first", "other order first", "other order last"],
)
def test_joined_untyped(order: list[int]) -> None:
    """Rendered with apiVersion and kind first (a cut) or in another order (encoded again), alone or
    mixed: the join is the untyped items, in order."""
    encoded = [orjson.dumps(ITEMS[index]) for index in order]
    joined = joined_untyped(encoded, "v1", "ConfigMap")
    assert orjson.loads(b"[" + joined + b"]") == [UNTYPED[index] for index in order]


def test_no_items_join_to_nothing() -> None:
    assert joined_untyped([], "v1", "ConfigMap") == b""
