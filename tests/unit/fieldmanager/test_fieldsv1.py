"""FieldsV1 encoding, field-set algebra and path rendering, against sigs.k8s.io/structured-merge-diff
fieldpath (serialize.go, serialize-pe.go, set.go, element.go, path.go) and its tests
(serialize_test.go ``TestSerializeV1GoldenData``/``TestDropUnknown``, path_test.go ``TestPathString``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apiserver.fieldmanager import FieldSet, FieldsV1Error, path_string


def compact(value: Any) -> str:
    # What Go's encoding/json writes for these ASCII-only sets.
    return json.dumps(value, separators=(",", ":"))


# fieldpath/serialize_test.go TestSerializeV1GoldenData: decoding then encoding gives the same bytes,
# which pins the order of path elements (fields < keys < values < indexes; values numbers < strings
# < booleans; keys field by field).
SMD_GOLDEN = [
    r'{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}',
    r'{"f:aaa":{"k:{\"name\":\"second\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\"port\":443,\"protocol\":\"udp\"}":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"k:{\"name\":\"first\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\"name\":\"second\"}":{}}},"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\"name\":\"first\"}":{"k:{\"name\":\"first\"}":{}}},"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},"i:3":{}},"k:{\"name\":\"first\"}":{"f:aad":{"f:aaf":{}}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"f:aaa":{"f:aad":{}}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"f:aac":{},"k:{\"name\":\"first\"}":{"i:3":{}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"i:4":{}}},"v:1":{"f:aac":{"i:4":{}},"f:aaf":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{}},"v:2":{"f:aad":{"f:aaf":{}},"i:1":{}},"v:3":{"f:aaa":{},"k:{\"name\":\"first\"}":{},"i:2":{}},"v:\"aa\"":{"f:aab":{"f:aaf":{}},"f:aae":{},"k:{\"name\":\"first\"}":{"f:aad":{}},"i:2":{}},"v:\"ab\"":{"f:aaf":{"i:4":{}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},"v:true":{"k:{\"name\":\"second\"}":{"f:aaa":{}},"i:2":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"i:1":{"i:3":{"f:aaf":{}}},"i:2":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"v:1":{}}},"i:3":{"f:aab":{"v:true":{"v:\"aa\"":{}}},"f:aaf":{},"i:1":{}},"i:4":{"v:\"aa\"":{"f:aab":{"k:{\"name\":\"second\"}":{}}}}}',
]


@pytest.mark.parametrize("golden", SMD_GOLDEN)
def test_smd_serialize_v1_golden_data_round_trips_byte_for_byte(golden: str) -> None:
    decoded = FieldSet.from_fields_v1(json.loads(golden))
    assert compact(decoded.to_fields_v1()) == golden


@pytest.mark.parametrize("golden", SMD_GOLDEN)
def test_encoding_sorts_any_insertion_order(golden: str) -> None:
    shuffled = json.loads(golden, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    assert compact(FieldSet.from_fields_v1(shuffled).to_fields_v1()) == golden


def test_smd_drop_unknown_path_element_types() -> None:
    assert FieldSet.from_fields_v1({"f:aaa": {}, "r:aab": {}}).to_fields_v1() == {"f:aaa": {}}


def test_kube_fields_of_an_applied_container_round_trip() -> None:
    # test/integration/apiserver/apply TestApplyConvertsManagedFieldsVersion: the exact raw FieldsV1.
    raw = r'{"f:metadata":{"f:labels":{"f:sidecar_version":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}}}'
    fields = FieldSet.from_fields_v1(json.loads(raw))
    assert compact(fields.to_fields_v1()) == raw
    assert [path_string(p) for p in fields.paths()] == [
        ".metadata.labels.sidecar_version",
        '.spec.template.spec.containers[name="sidecar"]',
        '.spec.template.spec.containers[name="sidecar"].image',
        '.spec.template.spec.containers[name="sidecar"].name',
    ]


def test_client_keys_are_canonicalized() -> None:
    # serialize-pe.go sorts key fields and re-serializes values, so equal elements compare equal.
    fields = FieldSet.from_fields_v1(
        {
            "f:ports": {
                'k:{"protocol":"TCP", "containerPort":80}': {".": {}, "f:name": {}},
                "v:1.0": {},
                "i:007": {},
            }
        }
    )
    assert fields.to_fields_v1() == {
        "f:ports": {
            'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:name": {}},
            "v:1": {},
            "i:7": {},
        }
    }


def test_membership_markers() -> None:
    # readIterV1: "." marks a member that has children; a node with no (known) children is a member.
    fields = FieldSet.from_fields_v1(
        {
            "f:a": {".": {}},
            "f:b": {"f:c": {}},
            "f:d": {"x:unknown": {}},
            "f:e": {".": {}, "f:f": {}},
        }
    )
    assert fields.to_fields_v1() == {
        "f:a": {},
        "f:b": {"f:c": {}},
        "f:d": {},
        "f:e": {".": {}, "f:f": {}},
    }
    assert fields.has(("f:a",)) and fields.has(("f:e",)) and fields.has(("f:e", "f:f"))
    assert not fields.has(("f:b",))
    assert fields.has(("f:b", "f:c"))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"x": {}}, "key must be 2 characters long"),
        ({"fx": {}}, "missing colon"),
        ({"k:{bad": {}}, "parsing key as path element"),
        ({"k:[1]": {}}, "not an object"),
        ({"i:x": {}}, "parsing key as path element"),
        ({"f:a": []}, "expected an object"),
        ([], "expected an object"),
    ],
)
def test_invalid_fields_v1_is_rejected(raw: Any, message: str) -> None:
    with pytest.raises(FieldsV1Error, match=message):
        FieldSet.from_fields_v1(raw)


def test_none_is_the_empty_set() -> None:
    assert FieldSet.from_fields_v1(None).empty()


def test_smd_path_strings() -> None:
    # fieldpath/path_test.go TestPathString.
    assert path_string(("f:foo", "i:1")) == ".foo[1]"
    assert path_string(("f:foo", "f:bar", "i:1", "f:baz")) == ".foo.bar[1].baz"
    assert (
        path_string(("f:foo", 'k:{"a":"b","c":1,"d":1.5,"e":true}'))
        == '.foo[a="b",c=1,d=1.5,e=true]'
    )
    assert (
        path_string(("f:foo", 'v:"b"', "v:5", "v:false", "v:3.14159"))
        == '.foo[="b"][=5][=false][=3.14159]'
    )


def test_path_strings_quote_like_go() -> None:
    # value.ToString uses %q for strings and %v (%g, shortest) for floats.
    assert path_string(("f:env", 'k:{"name":"a\\"b\\n"}')) == '.env[name="a\\"b\\n"]'
    assert path_string(("f:x", "v:1000000.5")) == ".x[=1.0000005e+06]"
    assert path_string(("f:x", "v:null")) == ".x[=null]"


def p(*paths: tuple[str, ...]) -> FieldSet:
    return FieldSet.from_paths(*paths)


def test_set_algebra_follows_smd_set() -> None:
    a = p(("f:spec", "f:a"), ("f:spec", "f:b"), ("f:spec",))
    b = p(("f:spec", "f:b"), ("f:spec", "f:c"))
    assert a.union(b) == p(("f:spec",), ("f:spec", "f:a"), ("f:spec", "f:b"), ("f:spec", "f:c"))
    assert a.difference(b) == p(("f:spec",), ("f:spec", "f:a"))
    assert a.intersection(b) == p(("f:spec", "f:b"))
    assert b.difference(a) == p(("f:spec", "f:c"))
    # RecursiveDifference drops everything below a member of the other set.
    assert a.recursive_difference(p(("f:spec",))) == FieldSet()
    assert a.difference(p(("f:spec",))) == p(("f:spec", "f:a"), ("f:spec", "f:b"))


def test_set_operations_return_the_same_object_when_nothing_changes() -> None:
    # Unchanged stored entries are written back as the very objects that were read.
    a = p(("f:spec", "f:a"), ("f:metadata", "f:labels", "f:x"))
    assert a.difference(p(("f:status", "f:x"))).root is a.root
    assert a.difference(p(("f:spec", "f:zzz"))).root is a.root
    assert a.union(p(("f:spec", "f:a"))).root is a.root
    assert a.recursive_difference(p(("f:status",))).root is a.root
    changed = a.difference(p(("f:spec", "f:a")))
    assert changed.root is not a.root
    assert changed.root["f:metadata"] is a.root["f:metadata"]  # untouched branches are shared


def test_paths_iterate_members_before_children_like_smd() -> None:
    fields = FieldSet.from_fields_v1(
        {"f:spec": {"f:template": {"f:x": {}}, "f:replicas": {}, "f:a": {}}, "f:data": {}}
    )
    assert [path_string(x) for x in fields.paths()] == [
        ".data",
        ".spec.a",
        ".spec.replicas",
        ".spec.template.x",
    ]
    assert len(fields) == 4
