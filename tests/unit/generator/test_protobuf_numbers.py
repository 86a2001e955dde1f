"""Protobuf numbers in definitions: the ``protobuf`` key read at load time, the completeness and uniqueness checks
(each error with its file, line and field path), the message tree the plan builds, and the emitted module."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from apiserver.encoding import protobuf_meta
from apiserver.encoding.protobuf import Field, ListOf, MapOf, Message, decode, encode
from generator.check import check_definitions
from generator.definition import DefinitionErrors
from generator.load import load_text
from generator.plan import build_plan
from generator.plan_protobuf import ProtoValue, protobuf_plan
from generator.render import _environment, render_group_version

FILE = Path("definitions/stable.example.com/widget.yaml")


def definition(schema: str) -> str:
    body = textwrap.indent(textwrap.dedent(schema).lstrip("\n"), " " * 6)
    return f"group: stable.example.com\nkind: Widget\nversions:\n  v1:\n    storage: true\n    schema:\n{body}"


def errors(schema: str) -> list[str]:
    with pytest.raises(DefinitionErrors) as caught:
        loaded = load_text(definition(schema), FILE)
        check_definitions(loaded.definitions, loaded.sources)
    return [str(error) for error in caught.value.errors]


WIDGET = """
spec:
  type: object
  protobuf: 2
  required: [size]
  properties:
    size: {type: int32, protobuf: 1}
    label: {type: string, protobuf: {number: 2, pointer: true}}
    note: {type: string, protobuf: {number: 3, omitEmpty: false}}
    limits: {type: "map[string]quantity", protobuf: 4}
    matrix: {type: "[][]string", protobuf: 5}
    extra: {type: "map[string][]string", protobuf: 6}
    seen: {type: date-time, protobuf: {number: 7, message: MicroTime}}
    blob: {type: byte, protobuf: 8}
    port: {type: int-or-string, protobuf: 9}
    anything: {type: object, protobuf: 10}
    ratio: {type: double, protobuf: 11}
status:
  type: object
  protobuf: 3
  properties:
    conditions: {type: "[]Condition", protobuf: 1}
"""


def test_the_plan_follows_the_schema_and_the_tags() -> None:
    loaded = load_text(definition(WIDGET), FILE)
    check_definitions(loaded.definitions, loaded.sources)
    widget = loaded.definitions[0]
    message, problems = protobuf_plan(widget, widget.versions[0])
    assert problems == []
    assert message is not None
    metadata, spec, status = message.fields
    assert (metadata.number, metadata.name, metadata.value) == (
        1,
        "metadata",
        ProtoValue(shared="OBJECT_META"),
    )
    assert spec.value.message is not None
    fields = {f.name: f for f in spec.value.message.fields}
    assert fields["size"].omitempty is False  # required: Go's JSON tag has no omitempty
    assert fields["label"].pointer and fields["label"].omitempty
    assert fields["note"].omitempty is False
    assert fields["limits"].value == ProtoValue(map_of=ProtoValue(scalar="quantity"))
    assert fields["matrix"].repeated
    assert fields["matrix"].value == ProtoValue(list_of=ProtoValue(scalar="string"))
    assert fields["extra"].value == ProtoValue(
        map_of=ProtoValue(list_of=ProtoValue(scalar="string"))
    )
    assert fields["seen"].value == ProtoValue(scalar="microtime")
    assert fields["blob"].value == ProtoValue(scalar="bytes")
    assert fields["port"].value == ProtoValue(scalar="intorstring")
    assert fields["anything"].value == ProtoValue(scalar="raw")
    assert fields["ratio"].value == ProtoValue(scalar="double")
    assert status.value.message is not None
    conditions = status.value.message.fields[0]
    assert conditions.repeated and conditions.value == ProtoValue(shared="CONDITION")


def test_the_emitted_module_is_the_codec() -> None:
    loaded = load_text(definition(WIDGET), FILE)
    check_definitions(loaded.definitions, loaded.sources)
    version = build_plan(loaded.definitions).groups[0].versions[0]
    source = render_group_version(_environment(), version)["stable_example_com/v1/protobuf.py"]
    namespace: dict[str, Any] = {}
    exec(compile(source, "protobuf.py", "exec"), namespace)
    codec = namespace["WIDGET"]
    assert isinstance(codec, protobuf_meta.KindCodec)
    spec = codec.message.by_number[2].kind
    assert isinstance(spec, Message)
    assert spec.by_number[5] == Field(5, "matrix", ListOf("string"), repeated=True)
    assert spec.by_number[6] == Field(6, "extra", MapOf(ListOf("string")))
    assert spec.by_number[1] == Field(1, "size", "int32", omitempty=False)
    assert codec.message.by_number[3].kind == Message(
        "Widget.status", (Field(1, "conditions", protobuf_meta.CONDITION, repeated=True),)
    )
    obj = {
        "apiVersion": "stable.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "creationTimestamp": None},
        "spec": {"size": 0, "matrix": [["a"], []], "extra": {"k": ["v"]}, "port": "http"},
        "status": {},
    }
    assert decode(encode(obj, codec.message), codec.message) == {
        **obj,
        "spec": {**obj["spec"], "note": "", "seen": None, "anything": None},
    }


def test_kinds_without_numbers_have_no_codec() -> None:
    loaded = load_text(definition("spec: {type: object, properties: {size: int32}}\n"), FILE)
    check_definitions(loaded.definitions, loaded.sources)
    version = build_plan(loaded.definitions).groups[0].versions[0]
    assert not version.has_protobuf
    assert "stable_example_com/v1/protobuf.py" not in render_group_version(_environment(), version)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            "spec: {type: object, protobuf: two}\n",
            "7: versions.v1.schema.spec.protobuf: expected a field number or a mapping with number, "
            'pointer, omitEmpty, message; got "two"',
        ),
        (
            "spec: {type: object, protobuf: 0}\n",
            "7: versions.v1.schema.spec.protobuf: a protobuf field number is between 1 and 536870911, got 0",
        ),
        (
            "spec: {type: object, protobuf: 19001}\n",
            "7: versions.v1.schema.spec.protobuf: protobuf reserves field numbers 19000-19999 for itself, "
            "got 19001",
        ),
        (
            "spec: {type: object, protobuf: {number: 2, pointr: true}}\n",
            '7: versions.v1.schema.spec.protobuf.pointr: unknown key "pointr"; did you mean "pointer"?',
        ),
        (
            "spec: {type: object, protobuf: {pointer: true}}\n",
            "7: versions.v1.schema.spec.protobuf.number: required key is missing",
        ),
        (
            "t: {type: date-time, protobuf: {number: 2, message: Timestamp}}\n",
            '7: versions.v1.schema.t.protobuf.message: expected one of MicroTime, got "Timestamp"',
        ),
        (
            "tags: {type: array, protobuf: 2, items: {type: string, protobuf: 1}}\n",
            "7: versions.v1.schema.tags.items.protobuf: only object properties have protobuf numbers; "
            "list items and map values are numbered by their list or map",
        ),
    ],
)
def test_malformed_tags_are_load_errors(schema: str, expected: str) -> None:
    found = errors(schema)
    assert [error.split(":", 1)[1] for error in found] == [expected]
    assert all(error.startswith(str(FILE)) for error in found)


def test_missing_and_duplicate_numbers_are_check_errors() -> None:
    schema = """
    spec:
      type: object
      protobuf: 2
      properties:
        a: {type: string, protobuf: 1}
        b: string
        c: {type: string, protobuf: 1}
    status: {type: object, protobuf: 1}
    """
    assert errors(schema) == [
        f'{FILE}:12: versions.v1.schema.spec.properties.b: "b" has no protobuf number; every field of a kind '
        "with protobuf numbers needs one (protobuf: N, as in the kind's generated.proto)",
        f'{FILE}:13: versions.v1.schema.spec.properties.c: protobuf number 1 is already "a"\'s',
        f'{FILE}:14: versions.v1.schema.status: protobuf number 1 is already "metadata"\'s',
    ]


def test_schemas_without_a_protobuf_form_are_check_errors() -> None:
    schema = """
    maps: {type: "map[string]map[string]string", protobuf: 2}
    lists: {type: "[]map[string]string", protobuf: 3}
    flags: {type: "[]boolean", protobuf: {number: 4, pointer: true}}
    """
    assert errors(schema) == [
        f"{FILE}:7: versions.v1.schema.maps: a map of maps has no protobuf form",
        f"{FILE}:8: versions.v1.schema.lists: a list of maps has no protobuf form",
        f"{FILE}:9: versions.v1.schema.flags: pointer applies to scalars and objects; a list or map is "
        "written when it has items",
    ]
