"""Kubernetes protobuf: the generic wire codec between proto2 bytes and the JSON-shaped dicts the server works with.

kubectl 1.32+ sends built-in kinds as protobuf and asks for protobuf back (API-CONVENTIONS.md §1); client-go's
typed informers watch in protobuf. This module knows no kind: a message is described by a ``Message`` table
(generated per group-version from the field numbers the definitions declare, or shared meta/v1 ones in
``protobuf_meta``), and ``decode_message``/``encode_message`` walk that table.

The envelope is the 4 bytes ``k8s\\0`` and a ``runtime.Unknown`` message (TypeMeta, raw bytes of the kind's
message, contentEncoding, contentType); see k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go.

Both directions follow Go, because the peer is a Go program: decoding gives what Go's ``encoding/json`` would
print for the object Go's protobuf unmarshalling builds (omitempty fields left out when zero, a zero
``metav1.Time`` as ``null``, non-pointer structs always printed), so a protobuf body decodes to exactly the JSON
body an older kubectl sends; encoding writes what gogo-protobuf's generated marshallers write (every non-pointer
field, zero or not, in field-number order; map entries sorted by key; pointers only when set), so an object
read back from JSON encodes to the bytes kube would send. No protobuf library is used.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import orjson

from apiserver.encoding.limits import load_json

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_CONTENT_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_MASK64 = (1 << 64) - 1


class ProtobufError(ValueError):
    """The body is not a well-formed Kubernetes protobuf message (or a value cannot be encoded as one)."""


class UnsupportedKindError(ProtobufError):
    """A well-formed envelope holding an encoding this server does not read; the server answers 415."""


Scalar = Literal[
    "string",
    "bytes",
    "bool",
    "int32",
    "int64",
    "double",
    "time",  # metav1.Time: a Timestamp message, printed to the second
    "microtime",  # metav1.MicroTime: a Timestamp message, printed to the microsecond
    "intorstring",  # intstr.IntOrString {type, intVal, strVal}
    "quantity",  # resource.Quantity {string}
    "raw",  # runtime.RawExtension {raw}: embedded JSON
    "fieldsv1",  # metav1.FieldsV1 {Raw}: the managed fields' JSON
]
SCALARS: frozenset[str] = frozenset(Scalar.__args__)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class MapOf:
    """``map<string, value>``: on the wire a repeated entry message with key = 1, value = 2."""

    value: Value


@dataclass(frozen=True, slots=True)
class ListOf:
    """A list where protobuf cannot repeat directly (a map value, a list item): a message wrapping
    ``repeated item items = 1``, as kube's ExtraValue wraps ``[]string``."""

    item: Value


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message, with the Go struct field's rules.

    ``omitempty`` mirrors the JSON tag (a zero value is left out when decoding); ``pointer`` marks a Go pointer,
    which is written and printed exactly when set (even when zero), where a plain Go field is always written and
    a struct always printed.
    """

    number: int
    name: str
    kind: Value = "string"
    repeated: bool = False
    omitempty: bool = True
    pointer: bool = False


@dataclass(frozen=True)
class Message:
    """A proto2 message: its fields (in any order; the wire order is by number) and the name errors show."""

    name: str
    fields: tuple[Field, ...]
    by_number: dict[int, Field] = field(init=False, repr=False, compare=False)
    in_wire_order: tuple[Field, ...] = field(init=False, repr=False, compare=False)
    wheres: tuple[tuple[Field, str], ...] = field(init=False, repr=False, compare=False)
    """Each field with the name its errors show, built once rather than per decoded field."""
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_number", {f.number: f for f in self.fields})
        object.__setattr__(
            self, "in_wire_order", tuple(sorted(self.fields, key=lambda f: f.number))
        )
        object.__setattr__(self, "wheres", tuple((f, f"{self.name}.{f.name}") for f in self.fields))
        object.__setattr__(self, "_hash", hash((self.name, self.fields)))

    def __hash__(self) -> int:
        """Computed once: the generated hash would walk the whole table on every lookup."""
        return self._hash


Value = Scalar | Message | MapOf | ListOf


# --- wire format: reading ------------------------------------------------------------------------


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
    pos, end = 0, len(data)
    while pos < end:
        key = data[pos]
        if key < 0x80:  # one-byte keys and sizes are the common case: no call
            pos += 1
        else:
            key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        value: int | bytes
        if wire == LENGTH:
            if pos < end and data[pos] < 0x80:
                size = data[pos]
                pos += 1
            else:
                size, pos = _varint(data, pos)
            if pos + size > end:
                raise ProtobufError(f"field {number} runs past the end of its message")
            value, pos = data[pos : pos + size], pos + size
        elif wire == VARINT:
            value, pos = _varint(data, pos)
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > end:
                raise ProtobufError("truncated fixed-width field")
            value, pos = int.from_bytes(data[pos : pos + size], "little"), pos + size
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


# --- wire format: writing ------------------------------------------------------------------------


def varint(value: int) -> bytes:
    """A base-128 varint; negative numbers as their 64-bit two's complement (Go's ``uint64(int64)``)."""
    value &= _MASK64
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def length_delimited(number: int, payload: bytes) -> bytes:
    return _tag(number, LENGTH) + varint(len(payload)) + payload


# --- values: decoding ----------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ZERO_TIME_SECONDS = -62135596800  # 0001-01-01T00:00:00Z, Go's zero time.Time
_TIMES = frozenset({"time", "microtime"})
_VARINT_KINDS = frozenset({"bool", "int32", "int64"})
STRUCT_SCALARS = frozenset({"time", "microtime", "intorstring", "quantity", "raw"})
"""Go structs among the scalars: encoding/json prints them whatever their omitempty says."""


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
    if whole == _ZERO_TIME_SECONDS and not nanos:
        return None  # Go's zero time.Time (year 1), which encoding/json prints as null
    try:
        moment = _EPOCH + timedelta(seconds=whole, microseconds=nanos // 1000)
    except OverflowError:
        raise ProtobufError(f"timestamp {seconds}s is out of range") from None
    text = f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}"
    return f"{text}.{moment.microsecond:06d}Z" if micro else f"{text}Z"


def _int_or_string(data: bytes) -> int | str:
    kind, number, text = 0, 0, ""
    for field_number, _, value in wire_fields(data):
        if field_number == 1 and isinstance(value, int):
            kind = _signed(value, 64)
        elif field_number == 2 and isinstance(value, int):
            number = _signed(value, 32)
        elif field_number == 3 and isinstance(value, bytes):
            text = _text(value)
    return text if kind == 1 else number


def _embedded_json(data: bytes, where: str) -> Any:
    """RawExtension / FieldsV1: ``bytes raw = 1`` holding JSON; nothing is Go's nil, printed ``null``."""
    raw = b"".join(v for n, _, v in wire_fields(data) if n == 1 and isinstance(v, bytes))
    try:
        return load_json(raw) if raw else None
    except orjson.JSONDecodeError:
        raise ProtobufError(f"{where}: embedded value is not JSON") from None


def go_zero(kind: Value) -> Any:
    """Go's zero value of a field as encoding/json prints it."""
    if isinstance(kind, Message):
        return decode_message(kind, b"")
    return _ZEROS.get(kind) if isinstance(kind, str) else None


_ZEROS: dict[str, Any] = {
    "string": "",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "double": 0.0,
    "intorstring": 0,
    "quantity": "0",
}


def _decode_value(kind: Value, wire: int, value: int | bytes, where: str) -> Any:
    if isinstance(kind, Message):
        if wire != LENGTH or not isinstance(value, bytes):
            raise ProtobufError(f"{where}: wire type {wire}, expected {LENGTH}")
        return decode_message(kind, value)
    if kind in _VARINT_KINDS:
        if not isinstance(value, int) or wire != VARINT:
            raise ProtobufError(f"{where}: wire type {wire}, expected {VARINT}")
        if kind == "bool":
            return value != 0
        return _signed(value, 32 if kind == "int32" else 64)
    if kind == "double":
        if wire != FIXED64 or not isinstance(value, int):
            raise ProtobufError(f"{where}: wire type {wire}, expected {FIXED64}")
        result: float = struct.unpack("<d", value.to_bytes(8, "little"))[0]
        return result
    if wire != LENGTH or not isinstance(value, bytes):
        raise ProtobufError(f"{where}: wire type {wire}, expected {LENGTH}")
    if isinstance(kind, MapOf):
        raise ProtobufError(f"{where}: a map cannot be a map value or a list item")
    if isinstance(kind, ListOf):
        return [_decode_value(kind.item, w, v, where) for n, w, v in wire_fields(value) if n == 1]
    if kind == "string":
        return _text(value)
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind in _TIMES:
        return _timestamp(value, kind == "microtime")
    if kind == "intorstring":
        return _int_or_string(value)
    if kind == "quantity":
        text = "".join(
            _text(v) for n, _, v in wire_fields(value) if n == 1 and isinstance(v, bytes)
        )
        return text or "0"
    return _embedded_json(value, where)  # raw, fieldsv1


def _decode_map(kind: MapOf, entries: list[bytes], where: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for entry in entries:
        key, value = "", go_zero(kind.value)
        for number, wire, item in wire_fields(entry):
            if number == 1:
                key = _decode_value("string", wire, item, where)
            elif number == 2:
                value = _decode_value(kind.value, wire, item, where)
        result[key] = value
    return result


def _decode_field(spec: Field, values: list[tuple[int, int | bytes]], where: str) -> Any:
    """The JSON value of one field, or ``...`` when Go's encoding/json would leave it out."""
    kind = spec.kind
    if isinstance(kind, MapOf) or spec.repeated:
        if isinstance(kind, MapOf):
            if any(wire != LENGTH for wire, _ in values):
                raise ProtobufError(f"{where}: map entry is not length-delimited")
            items: Any = _decode_map(kind, [v for _, v in values if isinstance(v, bytes)], where)
        else:
            items = []
            for wire, value in values:
                if wire == LENGTH and kind in _VARINT_KINDS and isinstance(value, bytes):
                    items.extend(_packed(kind, value, where))  # a packed repeated scalar
                else:
                    items.append(_decode_value(kind, wire, value, where))
        if items:
            return items
        return ... if spec.omitempty else None
    if not values:
        if spec.pointer:
            return ... if spec.omitempty else None  # a nil pointer
        if isinstance(kind, Message) or kind in STRUCT_SCALARS:
            return go_zero(kind)  # Go prints structs even when empty; a zero Time as null
        if kind == "bytes" or kind == "fieldsv1":
            return ... if spec.omitempty else None  # a nil slice
        return ... if spec.omitempty else go_zero(kind)
    if isinstance(kind, Message):  # repeated occurrences of a message merge, as in proto2
        if any(wire != LENGTH for wire, _ in values):
            raise ProtobufError(f"{where}: wire type is not length-delimited")
        return decode_message(kind, b"".join(v for _, v in values if isinstance(v, bytes)))
    wire, value = values[-1]  # the last occurrence of a scalar wins
    result = _decode_value(kind, wire, value, where)
    if (
        spec.omitempty
        and not spec.pointer
        and kind not in STRUCT_SCALARS
        and result in ("", 0, False)
    ):
        return ...
    return result


def _packed(kind: Value, data: bytes, where: str) -> list[Any]:
    out, pos = [], 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        out.append(_decode_value(kind, VARINT, value, where))
    return out


def decode_message(message: Message, data: bytes) -> dict[str, Any]:
    """Decode one message into its JSON form; fields the table does not know are skipped (as Go skips them)."""
    seen: dict[int, list[tuple[int, int | bytes]]] = {}
    by_number = message.by_number
    for number, wire, value in wire_fields(data):
        if number in by_number:
            bucket = seen.get(number)
            if bucket is None:
                seen[number] = [(wire, value)]
            else:
                bucket.append((wire, value))
    result: dict[str, Any] = {}
    for spec, where in message.wheres:
        value = _decode_field(spec, seen.get(spec.number, _NOTHING), where)
        if value is not ...:
            result[spec.name] = value
    return result


_NOTHING: list[tuple[int, int | bytes]] = []


# --- values: encoding ----------------------------------------------------------------------------


def _seconds_and_nanos(text: Any, where: str) -> tuple[int, int]:
    if not isinstance(text, str):
        raise ProtobufError(f"{where}: expected an RFC 3339 time, got {type(text).__name__}")
    try:
        moment = datetime.fromisoformat(text.upper())  # RFC 3339 allows a lowercase "t" and "z"
    except ValueError:
        raise ProtobufError(f"{where}: {text!r} is not an RFC 3339 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    return seconds, delta.microseconds * 1000


def _timestamp_bytes(value: Any, micro: bool, where: str) -> bytes:
    """metav1.Time drops the fraction (its ProtoTime writes seconds only); MicroTime keeps microseconds.
    Both write seconds and nanos, as the generated Timestamp marshaller does; a zero time is empty."""
    if value is None:
        return b""
    seconds, nanos = _seconds_and_nanos(value, where)
    if seconds == _ZERO_TIME_SECONDS and (nanos == 0 or not micro):
        return b""  # Go's zero time writes nothing
    return b"\x08" + varint(seconds) + b"\x10" + varint(nanos if micro else 0)


def _bytes_of(kind: Value, value: Any, where: str) -> bytes:
    """The payload of a length-delimited value."""
    if isinstance(kind, Message):
        if not isinstance(value, dict):
            raise ProtobufError(f"{where}: expected an object")
        return encode_message(kind, value)
    if isinstance(kind, MapOf):
        raise ProtobufError(f"{where}: a map cannot be a map value or a list item")
    if isinstance(kind, ListOf):
        if not isinstance(value, list):
            raise ProtobufError(f"{where}: expected a list")
        return b"".join(_one(kind.item, 1, item, where) for item in value)
    if kind == "string":
        if not isinstance(value, str):
            raise ProtobufError(f"{where}: expected a string")
        return value.encode()
    if kind == "bytes":
        if not isinstance(value, str):
            raise ProtobufError(f"{where}: expected base64 text")
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            raise ProtobufError(f"{where}: not base64") from None
    if kind in _TIMES:
        return _timestamp_bytes(value, kind == "microtime", where)
    if kind == "intorstring":
        if isinstance(value, str):
            return b"\x08\x01\x10\x00" + length_delimited(3, value.encode())
        if isinstance(value, int) and not isinstance(value, bool):
            return b"\x08\x00\x10" + varint(value) + b"\x1a\x00"
        raise ProtobufError(f"{where}: expected an integer or a string")
    if kind == "quantity":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ProtobufError(f"{where}: expected a quantity")
        return length_delimited(1, str(value).encode())
    # raw, fieldsv1: the JSON itself; Go's nil (null) is no raw at all
    return b"" if value is None else length_delimited(1, orjson.dumps(value))


def _one(kind: Value, number: int, value: Any, where: str) -> bytes:
    """One occurrence of a field (a list item, a map value, a singular field)."""
    if kind in _VARINT_KINDS:
        if kind == "bool":
            if not isinstance(value, bool):
                raise ProtobufError(f"{where}: expected true or false")
            return _tag(number, VARINT) + (b"\x01" if value else b"\x00")
        if not isinstance(value, int) or isinstance(value, bool):
            raise ProtobufError(f"{where}: expected an integer")
        return _tag(number, VARINT) + varint(value)
    if kind == "double":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ProtobufError(f"{where}: expected a number")
        return _tag(number, FIXED64) + struct.pack("<d", value)
    return length_delimited(number, _bytes_of(kind, value, where))


def _map_entries(kind: MapOf, number: int, value: Any, where: str) -> Iterator[bytes]:
    """Entries sorted by key, as kube's generated marshallers sort them."""
    if not isinstance(value, dict):
        raise ProtobufError(f"{where}: expected an object")
    for key in sorted(value):
        entry = length_delimited(1, key.encode()) + _one(kind.value, 2, value[key], where)
        yield length_delimited(number, entry)


def encode_message(message: Message, obj: dict[str, Any]) -> bytes:
    """Encode a JSON-shaped object as gogo-protobuf would marshal the Go struct it unmarshals into."""
    out: list[bytes] = []
    for spec in message.in_wire_order:
        value = obj.get(spec.name)
        kind, number = spec.kind, spec.number
        if value is None:
            if spec.pointer or spec.repeated or isinstance(kind, MapOf):
                continue
            if kind in ("bytes", "fieldsv1"):
                continue  # nil slices are not written
            if kind == "raw":
                out.append(length_delimited(number, b""))  # a RawExtension struct without raw
                continue
            value = _ZEROS.get(kind) if isinstance(kind, str) else {}
            if kind in _TIMES:
                out.append(length_delimited(number, b""))  # the zero time: an empty Timestamp
                continue
        where = f"{message.name}.{spec.name}"
        if isinstance(kind, MapOf):
            out.extend(_map_entries(kind, number, value, where))
        elif spec.repeated:
            if not isinstance(value, list):
                raise ProtobufError(f"{where}: expected a list")
            out.extend(_one(kind, number, item, where) for item in value)
        else:
            out.append(_one(kind, number, value, where))
    return b"".join(out)


# --- the envelope --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unknown:
    """runtime.Unknown: what the envelope says the raw bytes are."""

    api_version: str
    kind: str
    raw: bytes


def decode_envelope(body: bytes) -> Unknown:
    """Read ``k8s\\0`` + runtime.Unknown; refuse encodings other than plain protobuf."""
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
                    text = _decode_value("string", inner_wire, item, "TypeMeta")
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
    return Unknown(api_version, kind, raw)


def encode_envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """``k8s\\0`` + runtime.Unknown as kube's NestedMarshalTo writes it (empty contentEncoding and
    contentType included)."""
    type_meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    return MAGIC + length_delimited(1, type_meta) + length_delimited(2, raw) + b"\x1a\x00\x22\x00"


def decode(body: bytes, message: Message) -> dict[str, Any]:
    """A whole body of a known kind: the object's JSON form with the envelope's apiVersion and kind."""
    unknown = decode_envelope(body)
    return {
        "kind": unknown.kind,
        "apiVersion": unknown.api_version,
        **decode_message(message, unknown.raw),
    }


def encode(obj: dict[str, Any], message: Message) -> bytes:
    """A whole body: the envelope naming the object's apiVersion and kind around its message."""
    return encode_envelope(
        str(obj.get("apiVersion", "")), str(obj.get("kind", "")), encode_message(message, obj)
    )


def frame(payload: bytes) -> bytes:
    """One frame of a protobuf stream (LengthDelimitedFramer): a 4-byte big-endian length, then the bytes."""
    return len(payload).to_bytes(4, "big") + payload
