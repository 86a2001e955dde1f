"""Decode Kubernetes protobuf request bodies into the JSON-shaped dicts the server works with.

kubectl 1.32+ sends built-in kinds (``create namespace|configmap|secret``, ``auth can-i``, ``auth whoami``)
as protobuf and does not retry with JSON after a 415 (API-CONVENTIONS.md §1), so the server must read them.
Only decoding is needed: the request's Accept also lists JSON, and client-go picks its decoder from the
response's Content-Type.

The envelope is the 4 bytes ``k8s\\0`` and a ``runtime.Unknown`` message (TypeMeta, raw bytes of the kind's
proto2 message, contentEncoding, contentType). Field numbers come from ``generated.proto`` in kubernetes:
``staging/src/k8s.io/apimachinery/pkg/runtime``, ``.../pkg/apis/meta/v1``, ``k8s.io/api/core/v1``,
``k8s.io/api/authorization/v1`` and ``k8s.io/api/authentication/v1``.

The result is what Go's ``encoding/json`` would print for the decoded object, not a field-for-field dump of
the wire: go-protobuf writes every non-pointer field (empty strings, ``spec: {}``, a zero
``creationTimestamp``), while the JSON tags omit empty ``omitempty`` fields, print a zero ``metav1.Time`` as
``null`` and an absent non-``omitempty`` list as ``null``. Following the JSON rules makes a protobuf body
from kubectl 1.32 decode to exactly the JSON body kubectl 1.31 sends for the same command, which the server
already handles. No protobuf library is used: a proto2 wire reader plus the field tables below suffice.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """The body is not a well-formed Kubernetes protobuf message; the server answers 400."""


class UnsupportedKindError(ProtobufError):
    """A well-formed envelope holding a kind (or encoding) this module cannot decode; the server answers 415."""


Scalar = Literal[
    "string", "bytes", "bool", "int32", "int64", "time", "microtime", "fieldsv1", "strings"
]


@dataclass(frozen=True)
class MapOf:
    """``map<string, value>``: on the wire a repeated entry message with key = 1, value = 2."""

    value: Scalar | Message


@dataclass(frozen=True)
class Field:
    """One field of a message, with the JSON rules of its Go struct field.

    ``omitempty`` mirrors the JSON tag; ``pointer`` marks Go pointer fields, which are printed exactly when
    they were on the wire (even when zero) and omitted otherwise.
    """

    number: int
    name: str
    kind: Scalar | Message | MapOf = "string"
    repeated: bool = False
    omitempty: bool = True
    pointer: bool = False


@dataclass(frozen=True)
class Message:
    """A proto2 message: its fields in Go struct order, which is the order of the JSON keys."""

    name: str
    fields: tuple[Field, ...]
    by_number: dict[int, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_number", {f.number: f for f in self.fields})


# --- wire format ---------------------------------------------------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if result >= 1 << 64:
                raise ProtobufError("varint overflows 64 bits")
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError("varint longer than 10 bytes")


def wire_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield ``(field number, wire type, value)``: an int for varints and fixed words, bytes otherwise."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        value: int | bytes
        if wire == VARINT:
            value, pos = _varint(data, pos)
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > len(data):
                raise ProtobufError("truncated fixed-width field")
            value, pos = int.from_bytes(data[pos : pos + size], "little"), pos + size
        elif wire == LENGTH:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise ProtobufError(f"field {number} runs past the end of its message")
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ProtobufError(f"unsupported wire type {wire} (field {number})")
        yield number, wire, value


def _signed(value: int, bits: int) -> int:
    """Go's conversion of a decoded varint to intN: keep the low bits, two's complement."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        raise ProtobufError(f"string field is not valid UTF-8: {error}") from None


# --- values --------------------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIMES = ("time", "microtime")


def _timestamp(data: bytes, micro: bool) -> str | None:
    """metav1.Time / MicroTime. An empty message is the zero time, which Go prints as ``null``."""
    if not data:
        return None
    seconds = nanos = 0
    for number, _, value in wire_fields(data):
        if isinstance(value, int) and number == 1:
            seconds = _signed(value, 64)
        elif isinstance(value, int) and number == 2:
            nanos = _signed(value, 32)
    whole, nanos = divmod(seconds * 1_000_000_000 + nanos, 1_000_000_000)
    try:
        moment = _EPOCH + timedelta(seconds=whole, microseconds=nanos // 1000)
    except OverflowError:
        raise ProtobufError(f"timestamp {seconds}s is out of range") from None
    text = f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}"
    return f"{text}.{moment.microsecond:06d}Z" if micro else f"{text}Z"


def _zero(kind: Scalar | Message | MapOf) -> Any:
    if isinstance(kind, Message):
        return decode_message(kind, b"")
    return {"string": "", "bool": False, "int32": 0, "int64": 0}.get(str(kind))


def _scalar(kind: Scalar | Message | MapOf, wire: int, value: int | bytes, where: str) -> Any:
    expected = VARINT if kind in ("bool", "int32", "int64") else LENGTH
    if wire != expected:
        raise ProtobufError(f"{where}: wire type {wire}, expected {expected}")
    if isinstance(value, int):
        if kind == "bool":
            return value != 0
        return _signed(value, 32 if kind == "int32" else 64)
    if isinstance(kind, Message):
        return decode_message(kind, value)
    if isinstance(kind, MapOf):
        raise AssertionError("maps are decoded by _map")
    if kind == "string":
        return _text(value)
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind in _TIMES:
        return _timestamp(value, kind == "microtime")
    if kind == "strings":  # a message wrapping `repeated string items = 1`, printed as a JSON list
        return [_text(v) for n, _, v in wire_fields(value) if n == 1 and isinstance(v, bytes)]
    # fieldsv1: `optional bytes Raw = 1`, the JSON document itself
    raw = b"".join(v for n, _, v in wire_fields(value) if n == 1 and isinstance(v, bytes))
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise ProtobufError(f"{where}: fieldsV1 is not JSON") from None


def _map(kind: MapOf, entries: list[int | bytes], where: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for entry in entries:
        assert isinstance(entry, bytes)
        key, value = "", _zero(kind.value)
        for number, wire, item in wire_fields(entry):
            if number == 1:
                key = _scalar("string", wire, item, where)
            elif number == 2:
                value = _scalar(kind.value, wire, item, where)
        result[key] = value
    return result


def _field_value(message: Message, spec: Field, values: list[tuple[int, int | bytes]]) -> Any:
    """The JSON value of one field, or ``...`` when Go's encoding/json would leave it out."""
    where = f"{message.name}.{spec.name}"
    kind = spec.kind
    if isinstance(kind, MapOf) or spec.repeated:
        if isinstance(kind, MapOf):
            if any(wire != LENGTH for wire, _ in values):
                raise ProtobufError(f"{where}: map entry is not length-delimited")
            items: Any = _map(kind, [value for _, value in values], where)
        else:
            items = [_scalar(kind, wire, value, where) for wire, value in values]
        if items:
            return items
        return ... if spec.omitempty else None
    if not values:
        if spec.pointer:
            return ...
        if isinstance(kind, Message) or kind in _TIMES:
            return _zero(kind)  # Go prints structs even when empty; a zero Time as null
        return ... if spec.omitempty else _zero(kind)
    if isinstance(kind, Message):  # repeated occurrences of a message merge, as in proto2
        if any(wire != LENGTH for wire, _ in values):
            raise ProtobufError(f"{where}: wire type is not length-delimited")
        return decode_message(
            kind, b"".join(value for _, value in values if isinstance(value, bytes))
        )
    wire, value = values[-1]  # the last occurrence of a scalar wins
    result = _scalar(kind, wire, value, where)
    if spec.omitempty and not spec.pointer and kind not in _TIMES and result == _zero(kind):
        return ...
    return result


def decode_message(message: Message, data: bytes) -> dict[str, Any]:
    """Decode one proto2 message into its JSON form; fields the table does not know are skipped."""
    seen: dict[int, list[tuple[int, int | bytes]]] = {}
    for number, wire, value in wire_fields(data):
        if number in message.by_number:
            seen.setdefault(number, []).append((wire, value))
    result: dict[str, Any] = {}
    for spec in message.fields:
        value = _field_value(message, spec, seen.get(spec.number, []))
        if value is not ...:
            result[spec.name] = value
    return result


def decode(body: bytes) -> dict[str, Any]:
    """Decode a whole request body (magic, runtime.Unknown, object) into the object's JSON form."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf magic k8s\\x00")
    api_version = kind = encoding = content_type = ""
    raw = b""
    for number, wire, value in wire_fields(body[len(MAGIC) :]):
        if wire != LENGTH or not isinstance(value, bytes):
            continue
        if number == 1:
            for inner, inner_wire, item in wire_fields(value):
                if inner in (1, 2):
                    text = _scalar("string", inner_wire, item, "TypeMeta")
                    api_version, kind = (text, kind) if inner == 1 else (api_version, text)
        elif number == 2:
            raw = value
        elif number == 3:
            encoding = _text(value)
        elif number == 4:
            content_type = _text(value)
    if encoding:
        raise UnsupportedKindError(f"content encoding {encoding!r} is not supported")
    if content_type not in ("", CONTENT_TYPE):
        raise UnsupportedKindError(f"embedded content type {content_type!r} is not supported")
    message = KINDS.get((api_version, kind))
    if message is None:
        raise UnsupportedKindError(f"no protobuf decoding for {kind or '?'} {api_version or '?'}")
    return {"kind": kind, "apiVersion": api_version, **decode_message(message, raw)}


# --- k8s.io/apimachinery/pkg/apis/meta/v1 --------------------------------------------------------

OWNER_REFERENCE = Message(
    "OwnerReference",
    (
        Field(5, "apiVersion", omitempty=False),
        Field(1, "kind", omitempty=False),
        Field(3, "name", omitempty=False),
        Field(4, "uid", omitempty=False),
        Field(6, "controller", "bool", pointer=True),
        Field(7, "blockOwnerDeletion", "bool", pointer=True),
    ),
)
MANAGED_FIELDS_ENTRY = Message(
    "ManagedFieldsEntry",
    (
        Field(1, "manager"),
        Field(2, "operation"),
        Field(3, "apiVersion"),
        Field(4, "time", "time", pointer=True),
        Field(6, "fieldsType"),
        Field(7, "fieldsV1", "fieldsv1", pointer=True),
        Field(8, "subresource"),
    ),
)
OBJECT_META = Message(
    "ObjectMeta",
    (
        Field(1, "name"),
        Field(2, "generateName"),
        Field(3, "namespace"),
        Field(4, "selfLink"),
        Field(5, "uid"),
        Field(6, "resourceVersion"),
        Field(7, "generation", "int64"),
        Field(8, "creationTimestamp", "time"),
        Field(9, "deletionTimestamp", "time", pointer=True),
        Field(10, "deletionGracePeriodSeconds", "int64", pointer=True),
        Field(11, "labels", MapOf("string")),
        Field(12, "annotations", MapOf("string")),
        Field(13, "ownerReferences", OWNER_REFERENCE, repeated=True),
        Field(14, "finalizers", repeated=True),
        Field(17, "managedFields", MANAGED_FIELDS_ENTRY, repeated=True),
    ),
)
METADATA = Field(1, "metadata", OBJECT_META)

# --- k8s.io/api/core/v1 --------------------------------------------------------------------------

NAMESPACE_CONDITION = Message(
    "NamespaceCondition",
    (
        Field(1, "type", omitempty=False),
        Field(2, "status", omitempty=False),
        Field(4, "lastTransitionTime", "time"),
        Field(5, "reason"),
        Field(6, "message"),
    ),
)
NAMESPACE = Message(
    "Namespace",
    (
        METADATA,
        Field(2, "spec", Message("NamespaceSpec", (Field(1, "finalizers", repeated=True),))),
        Field(
            3,
            "status",
            Message(
                "NamespaceStatus",
                (Field(1, "phase"), Field(2, "conditions", NAMESPACE_CONDITION, repeated=True)),
            ),
        ),
    ),
)
CONFIG_MAP = Message(
    "ConfigMap",
    (
        METADATA,
        Field(4, "immutable", "bool", pointer=True),
        Field(2, "data", MapOf("string")),
        Field(3, "binaryData", MapOf("bytes")),
    ),
)
SECRET = Message(
    "Secret",
    (
        METADATA,
        Field(5, "immutable", "bool", pointer=True),
        Field(2, "data", MapOf("bytes")),
        Field(4, "stringData", MapOf("string")),
        Field(3, "type"),
    ),
)
OBJECT_REFERENCE = Message(
    "ObjectReference",
    (
        Field(1, "kind"),
        Field(2, "namespace"),
        Field(3, "name"),
        Field(4, "uid"),
        Field(5, "apiVersion"),
        Field(6, "resourceVersion"),
        Field(7, "fieldPath"),
    ),
)
EVENT = Message(
    "Event",
    (
        METADATA,
        Field(2, "involvedObject", OBJECT_REFERENCE),
        Field(3, "reason"),
        Field(4, "message"),
        Field(5, "source", Message("EventSource", (Field(1, "component"), Field(2, "host")))),
        Field(6, "firstTimestamp", "time"),
        Field(7, "lastTimestamp", "time"),
        Field(8, "count", "int32"),
        Field(9, "type"),
        Field(10, "eventTime", "microtime"),
        Field(
            11,
            "series",
            Message(
                "EventSeries",
                (Field(1, "count", "int32"), Field(2, "lastObservedTime", "microtime")),
            ),
            pointer=True,
        ),
        Field(12, "action"),
        Field(13, "related", OBJECT_REFERENCE, pointer=True),
        Field(14, "reportingComponent", omitempty=False),
        Field(15, "reportingInstance", omitempty=False),
    ),
)

# --- k8s.io/api/authorization/v1 and authentication/v1 -------------------------------------------

SELECTOR_REQUIREMENT = Message(  # FieldSelectorRequirement and meta/v1 LabelSelectorRequirement
    "SelectorRequirement",
    (
        Field(1, "key", omitempty=False),
        Field(2, "operator", omitempty=False),
        Field(3, "values", repeated=True),
    ),
)
SELECTOR_ATTRIBUTES = Message(  # FieldSelectorAttributes and LabelSelectorAttributes
    "SelectorAttributes",
    (Field(1, "rawSelector"), Field(2, "requirements", SELECTOR_REQUIREMENT, repeated=True)),
)
RESOURCE_ATTRIBUTES = Message(
    "ResourceAttributes",
    (
        Field(1, "namespace"),
        Field(2, "verb"),
        Field(3, "group"),
        Field(4, "version"),
        Field(5, "resource"),
        Field(6, "subresource"),
        Field(7, "name"),
        Field(8, "fieldSelector", SELECTOR_ATTRIBUTES, pointer=True),
        Field(9, "labelSelector", SELECTOR_ATTRIBUTES, pointer=True),
    ),
)
SELF_SUBJECT_ACCESS_REVIEW = Message(
    "SelfSubjectAccessReview",
    (
        METADATA,
        Field(
            2,
            "spec",
            Message(
                "SelfSubjectAccessReviewSpec",
                (
                    Field(1, "resourceAttributes", RESOURCE_ATTRIBUTES, pointer=True),
                    Field(
                        2,
                        "nonResourceAttributes",
                        Message("NonResourceAttributes", (Field(1, "path"), Field(2, "verb"))),
                        pointer=True,
                    ),
                ),
            ),
        ),
        Field(
            3,
            "status",
            Message(
                "SubjectAccessReviewStatus",
                (
                    Field(1, "allowed", "bool", omitempty=False),
                    Field(4, "denied", "bool"),
                    Field(2, "reason"),
                    Field(3, "evaluationError"),
                ),
            ),
        ),
    ),
)
RESOURCE_RULE = Message(
    "ResourceRule",
    (
        Field(1, "verbs", repeated=True, omitempty=False),
        Field(2, "apiGroups", repeated=True),
        Field(3, "resources", repeated=True),
        Field(4, "resourceNames", repeated=True),
    ),
)
NON_RESOURCE_RULE = Message(
    "NonResourceRule",
    (
        Field(1, "verbs", repeated=True, omitempty=False),
        Field(2, "nonResourceURLs", repeated=True),
    ),
)
SELF_SUBJECT_RULES_REVIEW = Message(
    "SelfSubjectRulesReview",
    (
        METADATA,
        Field(2, "spec", Message("SelfSubjectRulesReviewSpec", (Field(1, "namespace"),))),
        Field(
            3,
            "status",
            Message(
                "SubjectRulesReviewStatus",
                (
                    Field(1, "resourceRules", RESOURCE_RULE, repeated=True, omitempty=False),
                    Field(2, "nonResourceRules", NON_RESOURCE_RULE, repeated=True, omitempty=False),
                    Field(3, "incomplete", "bool", omitempty=False),
                    Field(4, "evaluationError"),
                ),
            ),
        ),
    ),
)
USER_INFO = Message(
    "UserInfo",
    (
        Field(1, "username"),
        Field(2, "uid"),
        Field(3, "groups", repeated=True),
        Field(4, "extra", MapOf("strings")),
    ),
)
SELF_SUBJECT_REVIEW = Message(  # authentication v1, v1beta1 and v1alpha1 share the shape
    "SelfSubjectReview",
    (
        METADATA,
        Field(2, "status", Message("SelfSubjectReviewStatus", (Field(1, "userInfo", USER_INFO),))),
    ),
)

KINDS: dict[tuple[str, str], Message] = {
    ("v1", "Namespace"): NAMESPACE,
    ("v1", "ConfigMap"): CONFIG_MAP,
    ("v1", "Secret"): SECRET,
    ("v1", "Event"): EVENT,
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): SELF_SUBJECT_ACCESS_REVIEW,
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): SELF_SUBJECT_RULES_REVIEW,
    **{
        (f"authentication.k8s.io/{version}", "SelfSubjectReview"): SELF_SUBJECT_REVIEW
        for version in ("v1", "v1beta1", "v1alpha1")
    },
}
