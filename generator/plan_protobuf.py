"""The protobuf part of the IR: a kind's message tree, built from its schema and the ``protobuf`` tags of its
definition, and the problems that keep a tree from being built (reported by ``check`` at the lines written).

Every object with properties is a message whose fields are its properties; a map is ``map<string, value>``, a
list a repeated field (a list inside a list or a map value a wrapper message, as kube's ExtraValue); ``metadata``
is metav1.ObjectMeta at number 1, as in every kube kind. Scalars follow the JSON schema: ``format: byte`` is
bytes, ``date-time`` metav1.Time (MicroTime when tagged so), int-or-string IntOrString, ``quantity`` Quantity,
an object that keeps unknown fields RawExtension (embedded JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from generator.definition import Definition, JsonPath, ProtobufTag, Version

__all__ = ["ProtoField", "ProtoMessage", "ProtoModule", "ProtoValue", "hoist", "protobuf_plan"]

_IMPLICIT = ("apiVersion", "kind", "metadata")
_SHARED = {"Condition": "CONDITION"}
_SCALAR_MESSAGES = {"Quantity": "quantity", "MicroTime": "microtime"}


@dataclass(frozen=True)
class ProtoValue:
    """What a field holds: exactly one of a runtime scalar name, a shared meta/v1 message (the constant's name
    in apiserver.encoding.protobuf_meta), a message of its own (or, once hoisted, the name of the module
    constant that holds it), a map's value, or a wrapped list's item."""

    scalar: str = ""
    shared: str = ""
    message: ProtoMessage | None = None
    ref: str = ""
    map_of: ProtoValue | None = None
    list_of: ProtoValue | None = None


@dataclass(frozen=True)
class ProtoField:
    number: int
    name: str
    value: ProtoValue
    repeated: bool = False
    omitempty: bool = True
    pointer: bool = False


@dataclass(frozen=True)
class ProtoMessage:
    """A message: its name (shown in decoding errors) and its fields in schema order."""

    name: str
    fields: tuple[ProtoField, ...]


@dataclass
class _Builder:
    kind: str
    tags: Mapping[JsonPath, ProtobufTag]
    problems: list[tuple[JsonPath, str]] = field(default_factory=list)

    def message(self, schema: Mapping[str, Any], path: JsonPath, name: str) -> ProtoMessage:
        root = not path
        fields: list[ProtoField] = []
        if root:
            fields.append(ProtoField(1, "metadata", ProtoValue(shared="OBJECT_META")))
        taken: dict[int, str] = {1: "metadata"} if root else {}
        required = set(schema.get("required", ()))
        for prop, sub in schema.get("properties", {}).items():
            if root and prop in _IMPLICIT:
                continue
            here = (*path, "properties", prop)
            tag = self.tags.get(here, ProtobufTag())
            if not tag.number:
                self.problems.append(
                    (
                        here,
                        f'"{prop}" has no protobuf number; every field of a kind with protobuf numbers '
                        "needs one (protobuf: N, as in the kind's generated.proto)",
                    )
                )
                continue
            if tag.number in taken:
                self.problems.append(
                    (here, f'protobuf number {tag.number} is already "{taken[tag.number]}"\'s')
                )
                continue
            taken[tag.number] = prop
            built = self.field(sub, here, f"{name}.{prop}")
            if built is None:
                continue
            value, repeated = built
            omitempty = prop not in required if tag.omit_empty is None else tag.omit_empty
            if tag.pointer and (repeated or value.map_of is not None):
                self.problems.append(
                    (
                        here,
                        "pointer applies to scalars and objects; a list or map is written when it has items",
                    )
                )
            fields.append(ProtoField(tag.number, prop, value, repeated, omitempty, tag.pointer))
        return ProtoMessage(name, tuple(fields))

    def field(
        self, schema: Mapping[str, Any], path: JsonPath, name: str
    ) -> tuple[ProtoValue, bool] | None:
        """(what the field holds, whether it is repeated)."""
        if schema.get("type") == "array":
            value = self.value(schema.get("items", {}), (*path, "items"), name)
            if value is not None and value.map_of is not None:
                self.problems.append((path, "a list of maps has no protobuf form"))
                return None
            return None if value is None else (value, True)
        value = self.value(schema, path, name)
        return None if value is None else (value, False)

    def _tag_message(self, path: JsonPath) -> str:
        tag = self.tags.get(path)
        return tag.message if tag is not None else ""

    def value(self, schema: Mapping[str, Any], path: JsonPath, name: str) -> ProtoValue | None:
        named = self._tag_message(path)
        if named in _SHARED:
            return ProtoValue(shared=_SHARED[named])
        if named in _SCALAR_MESSAGES:
            if named == "MicroTime" and schema.get("format") != "date-time":
                self.problems.append((path, "message MicroTime is for date-time fields"))
                return None
            return ProtoValue(scalar=_SCALAR_MESSAGES[named])
        kind = schema.get("type")
        if schema.get("x-kubernetes-int-or-string"):
            return ProtoValue(scalar="intorstring")
        if kind == "string":
            scalar = {"byte": "bytes", "date-time": "time"}.get(schema.get("format", ""), "string")
            return ProtoValue(scalar=scalar)
        if kind == "integer":
            return ProtoValue(scalar="int32" if schema.get("format") == "int32" else "int64")
        if kind == "number":
            return ProtoValue(scalar="double")
        if kind == "boolean":
            return ProtoValue(scalar="bool")
        if kind == "array":
            item = self.value(schema.get("items", {}), (*path, "items"), name)
            if item is not None and item.map_of is not None:
                self.problems.append((path, "a list of maps has no protobuf form"))
                return None
            return None if item is None else ProtoValue(list_of=item)
        if "properties" in schema:
            return ProtoValue(message=self.message(schema, path, name))
        values = schema.get("additionalProperties")
        if kind == "object" and isinstance(values, Mapping):
            value = self.value(values, (*path, "additionalProperties"), name)
            if value is not None and value.map_of is not None:
                self.problems.append((path, "a map of maps has no protobuf form"))
                return None
            return None if value is None else ProtoValue(map_of=value)
        if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get(
            "x-kubernetes-embedded-resource"
        ):
            return ProtoValue(scalar="raw")  # runtime.RawExtension: the JSON itself
        if kind == "object":
            return ProtoValue(message=ProtoMessage(name, ()))
        self.problems.append((path, "this schema has no protobuf form (give it a type)"))
        return None


def protobuf_plan(
    definition: Definition, version: Version
) -> tuple[ProtoMessage | None, list[tuple[JsonPath, str]]]:
    """The kind's message in ``version`` (None when it declares no protobuf number) and the problems found,
    each at a path inside the version's schema."""
    if not any(tag.number for tag in version.protobuf.values()):
        return None, []
    builder = _Builder(definition.kind, version.protobuf)
    message = builder.message(version.schema, (), definition.kind)
    return message, builder.problems


@dataclass(frozen=True)
class ProtoModule:
    """A group-version's protobuf module: every message as a constant (children first, each shape once, so
    that Event's involvedObject and related share one), and each kind's root constant by the kind's constant."""

    messages: tuple[tuple[str, ProtoMessage], ...]
    roots: dict[str, str]


def _constant(name: str) -> str:
    """Service.spec.ports → _SERVICE_SPEC_PORTS."""
    words = (re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", part) for part in name.split("."))
    return "_" + "_".join(words).upper()


def hoist(kinds: Iterable[tuple[str, ProtoMessage]]) -> ProtoModule:
    """Lift the message trees of ``kinds`` ((kind constant, root message) pairs) into module constants."""
    messages: list[tuple[str, ProtoMessage]] = []
    by_shape: dict[tuple[ProtoField, ...], str] = {}
    taken: set[str] = set()

    def visit(value: ProtoValue) -> ProtoValue:
        if value.message is not None:
            return ProtoValue(ref=lift(value.message))
        if value.map_of is not None:
            return ProtoValue(map_of=visit(value.map_of))
        if value.list_of is not None:
            return ProtoValue(list_of=visit(value.list_of))
        return value

    def lift(message: ProtoMessage) -> str:
        fields = tuple(replace(f, value=visit(f.value)) for f in message.fields)
        known = by_shape.get(fields)
        if known is not None:
            return known
        name = _constant(message.name)
        while name in taken:
            name += "_"
        taken.add(name)
        by_shape[fields] = name
        messages.append((name, ProtoMessage(message.name, fields)))
        return name

    roots = {constant: lift(root) for constant, root in kinds}
    return ProtoModule(tuple(messages), roots)
