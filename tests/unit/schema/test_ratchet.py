"""Validation ratcheting of schema errors (KEP-4008): an update may keep a value that a stricter schema
now refuses, as long as it leaves that value as it was."""

from __future__ import annotations

from typing import Any

from apiserver.schema import validate
from apiserver.schema.ratchet import ratchet

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["owner"],
            "properties": {
                "owner": {"type": "string"},
                "name": {"type": "string", "maxLength": 3},
                "other": {"type": "integer"},
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "maxLength": 2},
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer", "maximum": 10},
                        },
                    },
                },
                "plain": {"type": "array", "items": {"type": "integer", "maximum": 10}},
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string", "maxLength": 2},
                },
            },
        }
    },
}


def fields(new: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    return [c.field for c in ratchet(validate(new, SCHEMA), new, old, SCHEMA)]


def test_an_unchanged_invalid_value_passes_and_a_changed_one_does_not() -> None:
    old = {"spec": {"owner": "o", "name": "toolong", "other": 1}}
    assert fields({"spec": {"owner": "o", "name": "toolong", "other": 2}}, old) == []
    assert fields({"spec": {"owner": "o", "name": "stilltoolong", "other": 2}}, old) == [
        "spec.name"
    ]
    assert fields({"spec": {"owner": "o", "name": "toolong", "other": 2}}, None) == ["spec.name"]


def test_required_belongs_to_the_object_that_lacks_the_field() -> None:
    old = {"spec": {"name": "a"}}
    assert fields({"spec": {"name": "a"}, "status": {}}, old) == []  # spec unchanged
    assert fields({"spec": {"name": "b"}}, old) == ["spec.owner"]  # spec changed: required again


def test_map_values_and_map_list_items_correlate_by_key() -> None:
    old = {
        "spec": {
            "owner": "o",
            "labels": {"a": "long"},
            "ports": [{"name": "x", "port": 99}, {"name": "y", "port": 1}],
        }
    }
    moved = {
        "spec": {
            "owner": "o",
            "other": 1,
            "labels": {"a": "long", "b": "ok"},
            "ports": [{"name": "y", "port": 2}, {"name": "x", "port": 99}],
        }
    }
    assert fields(moved, old) == []
    changed = {
        "spec": {"owner": "o", "labels": {"a": "longer"}, "ports": [{"name": "x", "port": 98}]}
    }
    assert fields(changed, old) == ["spec.labels.a", "spec.ports[0].port"]


def test_plain_lists_correlate_by_index_and_sets_only_as_a_whole() -> None:
    old = {"spec": {"owner": "o", "plain": [99, 1], "tags": ["long"]}}
    assert (
        fields({"spec": {"owner": "o", "other": 1, "plain": [99, 2], "tags": ["long"]}}, old) == []
    )
    assert fields({"spec": {"owner": "o", "plain": [1, 99], "tags": ["long", "ok"]}}, old) == [
        "spec.plain[1]",
        "spec.tags[0]",
    ]
