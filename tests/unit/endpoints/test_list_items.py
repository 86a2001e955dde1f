"""A built-in kind's list items carry no apiVersion or kind, as kube's typed lists encode them (only the list
names its kind); both the rendered items the watch cache hands over and items rendered otherwise."""

from __future__ import annotations

import orjson
import pytest

from apiserver.endpoints.output import untyped_items


@pytest.mark.parametrize(
    "item",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}},
        {"metadata": {"name": "a"}, "kind": "ConfigMap", "data": {"k": "v"}, "apiVersion": "v1"},
    ],
    ids=["rendered with apiVersion and kind first", "in another order"],
)
def test_untyped_items(item: dict[str, object]) -> None:
    [untyped] = untyped_items([orjson.dumps(item)], "v1", "ConfigMap")
    assert orjson.loads(untyped) == {"metadata": {"name": "a"}, "data": {"k": "v"}}
