"""YAML bodies read as kube-apiserver reads them: timestamps stay strings, scalar keys become strings, and
what JSON cannot hold is a YAML error (a 400 for the client), never a value the server cannot store."""

from __future__ import annotations

import pytest
import yaml

from apiserver.encoding.kubeyaml import load_body


def test_timestamps_stay_strings() -> None:
    assert load_body(b"a: 2024-01-01\nb: 2024-01-01T00:00:00Z") == {
        "a": "2024-01-01",
        "b": "2024-01-01T00:00:00Z",
    }


def test_integer_and_boolean_keys_become_strings_without_colliding() -> None:
    assert load_body(b"1: one\non: yes\nnested: [{2: two}]") == {
        "1": "one",
        "true": True,
        "nested": [{"2": "two"}],
    }


def test_merge_keys_and_anchors_still_work() -> None:
    assert load_body(b"base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2") == {
        "base": {"x": 1},
        "derived": {"x": 1, "y": 2},
    }


@pytest.mark.parametrize("document", [b"? [a]\n: b", b"1.5: x", b"~: x"])
def test_keys_json_cannot_hold_are_yaml_errors(document: bytes) -> None:
    with pytest.raises(yaml.YAMLError):
        load_body(document)
