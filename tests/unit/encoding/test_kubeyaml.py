"""YAML bodies read as kube-apiserver reads them: timestamps stay strings, scalar keys become strings, and
what JSON cannot hold is a YAML error (a 400 for the client), never a value the server cannot store. Aliases
are bounded as go-yaml bounds them (sigs.k8s.io/yaml's decoder), and by the bytes they add."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest
import yaml

from apiserver.encoding.kubeyaml import load_body
from apiserver.encoding.limits import MAX_DEPTH, DecodedTooLarge
from generator.yamlsource import LOADER, PURE_PYTHON_LOADER, read_documents


def test_timestamps_stay_strings() -> None:
    assert load_body(b"a: 2024-01-01\nb: 2024-01-01T00:00:00Z") == {
        "a": "2024-01-01",
        "b": "2024-01-01T00:00:00Z",
    }


# Plain scalars that PyYAML's YAML 1.1 resolvers give a type (a date, the "value" key type that it cannot
# construct) and go-yaml's resolve.go leaves strings: `- =` is an enum value of prometheus-operator's
# AlertmanagerConfig matchers (matchType: [=, "!=", =~, "!~"]).
GO_YAML_STRINGS = [
    ("=", "="),
    ("2024-01-01", "2024-01-01"),
    ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z"),
    ("=~", "=~"),
    ("'='", "="),
]


@pytest.mark.parametrize(("text", "value"), GO_YAML_STRINGS)
def test_the_server_and_the_generator_read_plain_scalars_as_go_yaml(text: str, value: str) -> None:
    document = f"enum:\n- {text}\nkey: {text}\n"
    expected = {"enum": [value], "key": value}
    assert load_body(document.encode()) == expected
    for loader in (LOADER, PURE_PYTHON_LOADER):
        (read,) = read_documents(Path("crd.yaml"), document, loader)
        assert read.value == expected


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


# --- bounds: measured on the node graph before any value is built ------------------------------------------


def amplification(copies: int, size: int = 100_000) -> bytes:
    """The issue's ConfigMap: ``copies`` aliases of one ``size``-byte string."""
    head = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: amp}\ndata:\n  k0: &s " + b"x" * size
    return head + b"\n" + b"".join(b"  k%d: *s\n" % i for i in range(1, copies + 1))


def test_aliases_expanding_past_the_body_limit_are_refused_before_building() -> None:
    body = amplification(3000)
    assert len(body) < 140_000  # 129 KB that would expand to 300 MB
    started = time.perf_counter()
    with pytest.raises(DecodedTooLarge) as caught:
        load_body(body)
    assert (
        time.perf_counter() - started < 3
    )  # about 25 ms, the parse; the server took 7 s and 570 MB
    assert caught.value.message == "Request entity too large: limit is 3145728"


def test_aliases_within_the_body_limit_are_expanded_into_copies() -> None:
    value = load_body(amplification(30))  # 3 MB once expanded
    assert len(value["data"]) == 31
    assert value["data"]["k1"] == "x" * 100_000
    shared = load_body(b"a: &x {k: [1]}\nb: *x\nc: [*x, *x]")
    assert shared == {"a": {"k": [1]}, "b": {"k": [1]}, "c": [{"k": [1]}, {"k": [1]}]}
    assert shared["a"] is not shared["b"] and shared["a"]["k"] is not shared["b"]["k"]
    assert shared["c"][0] is not shared["c"][1]


def laughs(levels: int, fanout: int) -> bytes:
    """The billion laughs: each anchor a list of ``fanout`` aliases of the one before."""
    lines = [b"a0: &a0 lol"]
    for level in range(1, levels + 1):
        aliases = b", ".join([b"*a%d" % (level - 1)] * fanout)
        lines.append(b"a%d: &a%d [%s]" % (level, level, aliases))
    return b"\n".join(lines)


def test_excessive_aliasing_is_go_yamls_error() -> None:
    # go-yaml decode.go allowedAliasRatio: 3 levels of 10 decode 2,470 nodes, 2,430 (98.4%) through
    # aliases, under the 99% allowed; 4 levels decode 24,692, 99.8% through aliases
    assert load_body(laughs(3, 10))["a3"][9][9][9] == "lol"
    for body in (laughs(4, 10), laughs(9, 9)):
        started = time.perf_counter()
        with pytest.raises(yaml.YAMLError) as caught:
            load_body(body)
        assert time.perf_counter() - started < 2  # milliseconds; a billion nodes otherwise
        assert str(caught.value) == "yaml: document contains excessive aliasing"


@pytest.mark.parametrize(
    "body", [b"a: &x [1, *x]", b"a: &x {b: *x}", b"a: !!seq &x [*x]", b"- &x [[*x]]"]
)
def test_an_alias_inside_its_anchor_is_go_yamls_error(body: bytes) -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_body(body)
    assert str(caught.value) == "yaml: anchor 'x' value contains itself"


def test_depth_is_bounded_after_expanding_aliases() -> None:
    assert load_body(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    half = MAX_DEPTH // 2 + 1
    for body in (
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
        b"".join(b"  " * i + b"- \n" for i in range(MAX_DEPTH + 1)),
        b"a: &a " + b"[" * half + b"]" * half + b"\nb: " + b"[" * half + b"*a" + b"]" * half,
        b"[" * 5000 + b"]" * 5000,  # libyaml's own limit (1,000) comes first: a YAML error too
    ):
        with pytest.raises(yaml.YAMLError) as caught:
            load_body(body)
        if len(body) < 5000:
            assert str(caught.value) == f"yaml: exceeded max depth of {MAX_DEPTH}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"a: .inf", "json: unsupported value: +Inf"),
        (b"a: -.inf", "json: unsupported value: -Inf"),
        (b"a: .nan", "json: unsupported value: NaN"),
    ],
)
def test_what_json_cannot_hold_is_encoding_jsons_error(body: bytes, message: str) -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_body(body)
    assert str(caught.value) == message


def test_values_are_json_values() -> None:
    value = load_body(
        b"big: 123456789012345678901234567890\n"
        b"uint: 18446744073709551615\n"
        b"bin: !!binary aGVsbG8=\n"
        b"ts: !!timestamp 2001-01-01\n"
        b"set: !!set {x, y}\n"
        b"omap: !!omap [{a: 1}]\n"
    )
    assert value == {
        "big": 1.2345678901234568e29,  # go-yaml resolves what fits no 64-bit integer as a float
        "uint": 18446744073709551615,
        "bin": "hello",
        "ts": "2001-01-01",
        "set": {"x": None, "y": None},
        "omap": [{"a": 1}],
    }
    assert orjson.loads(orjson.dumps(value)) == value


def test_an_empty_body_is_null() -> None:
    assert load_body(b"") is None
    assert load_body(b"# nothing\n") is None
