"""The bounds of a decoded body: nesting depth at most MAX_DEPTH, refused with Go's encoding/json message
("exceeded max depth", its scanner's ``maxNestingDepth`` check, which sigs.k8s.io/json keeps), as a JSON
decode error every caller already answers with 400; and kube's 413 wording for a body too large."""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest

from apiserver.encoding.limits import (
    MAX_DECODED_BYTES,
    MAX_DEPTH,
    DecodedTooLarge,
    TooDeep,
    depth_exceeds,
    depth_of,
    load_json,
)


def nested(depth: int, opening: str = "[") -> bytes:
    """``depth`` arrays, or objects, one in another."""
    if opening == "[":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


@pytest.mark.parametrize("opening", ["[", "{"])
def test_the_bound_is_inclusive(opening: str) -> None:
    assert load_json(nested(MAX_DEPTH, opening)) is not None
    with pytest.raises(orjson.JSONDecodeError) as caught:
        load_json(nested(MAX_DEPTH + 1, opening))
    assert isinstance(caught.value, TooDeep)
    assert str(caught.value) == f"invalid character '{opening}' exceeded max depth"


def test_every_stage_downstream_fits_under_orjsons_own_encoding_limit() -> None:
    # orjson refuses to encode past 254 levels; a served object is wrapped a few levels deeper (a List's
    # items, a Table row, managedFields.fieldsV1 four levels under the object)
    value: Any = {}
    for _ in range(MAX_DEPTH - 1):
        value = {"a": value}
    wrapped: Any = {"items": [{"metadata": {"managedFields": [{"fieldsV1": value}]}}]}
    for _ in range(30):
        wrapped = [wrapped]
    assert orjson.dumps(wrapped)


def test_brackets_in_strings_do_not_count() -> None:
    body = orjson.dumps({"a": "[" * (MAX_DEPTH * 2), "b": [[1]]})
    assert load_json(body) == {"a": "[" * (MAX_DEPTH * 2), "b": [[1]]}


def test_wide_documents_with_many_brackets_are_not_deep() -> None:
    body = orjson.dumps({"items": [{"a": [1], "b": {"c": []}} for _ in range(20_000)]})
    started = time.perf_counter()
    assert len(load_json(body)["items"]) == 20_000
    assert (
        time.perf_counter() - started < 5
    )  # about 15 ms for 640 KB, mostly orjson; generous for a loaded machine


def test_syntax_errors_are_orjsons() -> None:
    with pytest.raises(orjson.JSONDecodeError) as caught:
        load_json(b"{")
    assert not isinstance(caught.value, TooDeep)


def test_text_bodies_are_read_too() -> None:
    assert load_json('{"a": [1]}') == {"a": [1]}
    with pytest.raises(TooDeep):
        load_json(nested(MAX_DEPTH + 1).decode())


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [
        (1, 0, None),
        ({}, 0, "{"),
        ({}, 1, None),
        ([{"a": [1]}], 2, "["),
        ([{"a": [1]}], 3, None),
        ({"a": 1, "b": {"c": {}}}, 2, "{"),
    ],
)
def test_depth_exceeds(value: Any, limit: int, expected: str | None) -> None:
    assert depth_exceeds(value, limit) == expected


def test_depth_exceeds_does_not_recurse() -> None:
    value: Any = []
    for _ in range(100_000):
        value = [value]
    assert depth_exceeds(value, MAX_DEPTH) == "["


def test_decoded_too_large_is_kubes_413() -> None:
    error = DecodedTooLarge()
    # handlers/rest.go limitedReadBody: errors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
    assert (error.code, error.reason, error.message) == (
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    )
    assert (
        MAX_DECODED_BYTES == 3 * 1024 * 1024
    )  # k8s.io/apiserver server/config.go MaxRequestBodyBytes


@pytest.mark.parametrize(
    ("value", "depth"), [(1, 0), ({}, 1), ([{"a": [1]}, []], 3), ({"a": {"b": {}}}, 3)]
)
def test_depth_of(value: Any, depth: int) -> None:
    assert depth_of(value) == depth


def test_the_bound_holds_for_mixed_containers_beside_shallow_ones() -> None:
    def mixed(depth: int) -> Any:
        value: Any = 1
        for level in range(depth):
            value = [value, {"x": 1}] if level % 2 else {"a": value, "b": [1, [2]]}
        return value

    at_bound = mixed(MAX_DEPTH - 2)  # the innermost object's [1, [2]] is two levels more
    assert depth_of(at_bound) == MAX_DEPTH
    assert depth_exceeds(at_bound, MAX_DEPTH) is None
    assert depth_exceeds(mixed(MAX_DEPTH - 1), MAX_DEPTH) == "["
    assert depth_exceeds({"a": [1]}, 1) == "["  # past what orjson's encoder can vouch for: walked
