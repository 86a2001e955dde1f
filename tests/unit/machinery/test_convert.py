"""FieldMoves, the step the generated converters run for a version's renames: simultaneous, so declaration
order never matters, and clean, so a parent the target version lacks is not left behind empty."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from apiserver.machinery.convert import FieldMoves


def test_a_value_moved_into_an_object_does_not_ride_along_when_that_object_moves() -> None:
    """The version's spec.customer is the hub's spec.owner, its spec.customerName the hub's spec.customer.name:
    in either declaration order the name lands in the hub's spec.customer, not in spec.owner."""
    moves = [
        (("spec", "customer"), ("spec", "owner")),
        (("spec", "customerName"), ("spec", "customer", "name")),
    ]
    for ordered in itertools.permutations(moves):
        obj: dict[str, Any] = {"spec": {"customer": {"email": "a@b"}, "customerName": "Ada"}}
        FieldMoves(tuple(ordered)).apply(obj)
        assert obj == {"spec": {"owner": {"email": "a@b"}, "customer": {"name": "Ada"}}}


def test_a_field_leaves_its_object_before_the_object_moves() -> None:
    moves = [
        (("spec", "template"), ("spec", "pod")),
        (("spec", "template", "image"), ("spec", "image")),
    ]
    for ordered in itertools.permutations(moves):
        obj: dict[str, Any] = {"spec": {"template": {"image": "nginx", "port": 80}}}
        FieldMoves(tuple(ordered)).apply(obj)
        assert obj == {"spec": {"pod": {"port": 80}, "image": "nginx"}}


def test_a_deeper_target_lands_inside_a_shallower_one() -> None:
    moves = [
        (("spec", "limitsCpu"), ("spec", "resources", "limits", "cpu")),
        (("spec", "res"), ("spec", "resources")),
    ]
    for ordered in itertools.permutations(moves):
        obj: dict[str, Any] = {"spec": {"res": {"requests": {}}, "limitsCpu": "1"}}
        FieldMoves(tuple(ordered)).apply(obj)
        assert obj == {"spec": {"resources": {"requests": {}, "limits": {"cpu": "1"}}}}


def test_target_parents_are_created_only_for_a_value() -> None:
    moves = FieldMoves(((("spec", "customerName"), ("spec", "customer", "name")),))
    obj: dict[str, Any] = {"spec": {"total": 1}}
    moves.apply(obj)
    assert obj == {"spec": {"total": 1}}


VACATING = FieldMoves(
    moves=(
        (("spec", "customer", "name"), ("spec", "customerName")),
        (("spec", "customer", "address", "city"), ("spec", "city")),
    ),
    vacated=(("spec", "customer", "address"), ("spec", "customer")),
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"customer": {"name": "Ada", "address": {"city": "Paris"}}},
            {"customerName": "Ada", "city": "Paris"},
        ),
        ({"customer": {"address": {}}}, {}),  # empty before the move: still nothing the target has
        (
            {"customer": {"name": "Ada", "address": {"zip": "1"}}},
            {"customerName": "Ada", "customer": {"address": {"zip": "1"}}},
        ),
    ],
    ids=["emptied", "already-empty", "not-empty"],
)
def test_vacated_parents_go_only_when_empty(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = {"spec": spec}
    VACATING.apply(obj)
    assert obj == {"spec": expected}


def test_a_parent_the_target_has_stays_even_empty() -> None:
    moves = FieldMoves(((("spec", "customer", "name"), ("spec", "customerName")),))
    obj: dict[str, Any] = {"spec": {"customer": {"name": "Ada"}}}
    moves.apply(obj)
    assert obj == {"spec": {"customer": {}, "customerName": "Ada"}}
