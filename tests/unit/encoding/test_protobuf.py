"""Tests of the generic wire codec (apiserver.encoding.protobuf) and the shared meta/v1 messages: hand-encoded
bytes decode to what Go's encoding/json prints, objects encode to what gogo-protobuf writes, malformed input is
refused, and encoding round-trips with decoding (property tests over arbitrary tables and values)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.encoding.protobuf import (
    CONTENT_TYPE,
    Field,
    ListOf,
    MapOf,
    Message,
    ProtobufError,
    UnsupportedKindError,
    decode,
    decode_envelope,
    decode_message,
    encode,
    encode_envelope,
    encode_message,
    frame,
)
from apiserver.encoding.protobuf_meta import (
    CONDITION,
    OBJECT_META,
    PARTIAL_OBJECT_METADATA_LIST,
    STATUS,
    KindCodec,
)
from tests.protobufwire import entries, envelope, ln, time, varint, vi

# --- decoding: Go's unmarshal, then Go's encoding/json ---------------------------------------------


def test_object_meta_every_field() -> None:
    owner = ln(5, "v1") + ln(1, "ConfigMap") + ln(3, "owner") + ln(4, "u-1") + vi(6, 1) + vi(7, 0)
    managed = (
        ln(1, "kubectl")
        + ln(2, "Update")
        + ln(3, "v1")
        + ln(4, time(1_700_000_000))
        + ln(6, "FieldsV1")
        + ln(7, ln(1, b'{"f:data":{}}'))
    )
    meta = (
        ln(1, "n")
        + ln(2, "gen-")
        + ln(3, "ns")
        + ln(5, "uid-1")
        + ln(6, "42")
        + vi(7, 3)
        + ln(8, time(0))
        + ln(9, time(86400 * 365))
        + vi(10, 0)
        + entries(11, {"app": "x", "tier": ""})
        + entries(12, {"note": "ä"})
        + ln(13, owner)
        + ln(14, "a/b")
        + ln(14, "c")
        + ln(17, managed)
    )
    assert decode_message(OBJECT_META, meta) == {
        "name": "n",
        "generateName": "gen-",
        "namespace": "ns",
        "uid": "uid-1",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "1970-01-01T00:00:00Z",
        "deletionTimestamp": "1971-01-01T00:00:00Z",
        "deletionGracePeriodSeconds": 0,  # a pointer: printed because it was sent, though zero
        "labels": {"app": "x", "tier": ""},
        "annotations": {"note": "ä"},
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": "owner",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": False,
            }
        ],
        "finalizers": ["a/b", "c"],
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2023-11-14T22:13:20Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {}},
            }
        ],
    }


SPEC = Message("Spec", (Field(1, "finalizers", repeated=True),))
THING = Message(
    "Thing",
    (
        Field(1, "metadata", OBJECT_META),
        Field(2, "spec", SPEC),
        Field(3, "status", Message("Status", (Field(1, "phase"),))),
        Field(4, "note", omitempty=False),
        Field(5, "rules", "string", repeated=True, omitempty=False),
        Field(6, "series", SPEC, pointer=True),
        Field(7, "seen", "time"),
        Field(8, "port", "intorstring"),
        Field(9, "size", "quantity"),
        Field(10, "raw", "raw"),
    ),
)


def test_go_json_rules_for_empty_fields() -> None:
    """go-protobuf writes every non-pointer field; encoding/json drops the omitempty ones, prints a zero Time as
    null, structs as {}, a nil non-omitempty slice as null. Absent from the wire is the same: Go starts from the
    zero object."""
    wire_of_zero_meta = (
        ln(1, "") + ln(2, "") + ln(3, "") + ln(4, "") + ln(5, "") + vi(7, 0) + ln(8, b"")
    )
    zero = {
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": {},
        "note": "",
        "rules": None,
        "seen": None,
        "port": 0,
        "size": "0",
        "raw": None,
    }
    assert decode_message(THING, ln(1, wire_of_zero_meta) + ln(2, b"") + ln(3, ln(1, ""))) == zero
    assert decode_message(THING, b"") == zero


def test_pointers_are_printed_when_sent_and_wrapped_lists_and_maps() -> None:
    message = Message(
        "M",
        (
            Field(1, "flag", "bool", pointer=True),
            Field(2, "extra", MapOf(ListOf("string"))),
            Field(3, "matrix", ListOf("int32"), repeated=True),
            Field(4, "blobs", MapOf("bytes")),
            Field(5, "ratio", "double"),
        ),
    )
    data = (
        vi(1, 0)
        + ln(2, ln(1, "scopes") + ln(2, ln(1, "a") + ln(1, "b")))
        + ln(3, vi(1, 1) + vi(1, 2))
        + ln(3, b"")
        + entries(4, {"bin": b"\x00\xff", "empty": b""})
        + varint(5 << 3 | 1)
        + b"\x00\x00\x00\x00\x00\x00\xf8\x3f"
    )
    assert decode_message(message, data) == {
        "flag": False,
        "extra": {"scopes": ["a", "b"]},
        "matrix": [[1, 2], []],
        "blobs": {"bin": "AP8=", "empty": ""},
        "ratio": 1.5,
    }


def test_well_known_scalars() -> None:
    data = (
        ln(7, time(1_700_000_060, 999_000_000))  # Time drops the fraction
        + ln(8, vi(1, 1) + ln(3, "http"))
        + ln(9, ln(1, "500m"))
        + ln(10, ln(1, b'{"a":[1]}'))
    )
    decoded = decode_message(THING, data)
    assert decoded["seen"] == "2023-11-14T22:14:20Z"
    assert decoded["port"] == "http"
    assert decoded["size"] == "500m"
    assert decoded["raw"] == {"a": [1]}
    micro = Message("E", (Field(1, "eventTime", "microtime"),))
    assert decode_message(micro, ln(1, time(1_700_000_000, 123_456_789))) == {
        "eventTime": "2023-11-14T22:13:20.123456Z"  # MicroTime truncates to microseconds
    }


def test_unknown_fields_of_every_wire_type_are_skipped_and_last_scalar_wins() -> None:
    unknown = (
        vi(99, 7) + varint(98 << 3 | 1) + bytes(8) + varint(97 << 3 | 5) + bytes(4) + ln(96, "x")
    )
    meta = ln(1, "first") + unknown + ln(1, "second")
    assert decode_message(OBJECT_META, meta) == {"name": "second", "creationTimestamp": None}


def test_repeated_message_occurrences_merge_and_packed_varints_unpack() -> None:
    data = ln(1, ln(1, "cm")) + ln(1, entries(11, {"a": "1"}))
    assert decode_message(THING, data)["metadata"] == {
        "name": "cm",
        "creationTimestamp": None,
        "labels": {"a": "1"},
    }
    numbers = Message("N", (Field(1, "values", "int64", repeated=True),))
    assert decode_message(numbers, ln(1, varint(3) + varint(300)) + vi(1, 4)) == {
        "values": [3, 300, 4]
    }


def test_negative_integers_are_twos_complement() -> None:
    assert decode_message(OBJECT_META, vi(7, -5) + vi(10, -1)) == {
        "generation": -5,
        "deletionGracePeriodSeconds": -1,
        "creationTimestamp": None,
    }
    assert decode_message(Message("C", (Field(1, "count", "int32"),)), vi(1, -2)) == {"count": -2}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "magic"),
        (b"{}", "magic"),
        (b"k8s\x00\x0a", "truncated varint"),
        (b"k8s\x00\x12\x05ab", "runs past the end"),
        (b"k8s\x00" + b"\xff" * 11, "longer than 10 bytes"),
        (b"k8s\x00\x0b", "wire type 3"),
        (b"k8s\x00\x00", "field number 0"),
        (b"k8s\x00\x09\x01\x02", "truncated fixed-width"),
        (envelope("v1", "Thing", vi(1, 1)), "Thing.metadata"),
        (envelope("v1", "Thing", ln(1, vi(1, 3))), "ObjectMeta.name"),
        (envelope("v1", "Thing", ln(1, ln(1, b"\xff"))), "UTF-8"),
        (envelope("v1", "Thing", ln(1, vi(11, 1))), "map entry"),
        (envelope("v1", "Thing", ln(1, ln(8, vi(1, 10**15)))), "out of range"),
        (envelope("v1", "Thing", ln(1, ln(17, ln(7, ln(1, "{"))))), "not JSON"),
    ],
)
def test_malformed_bodies(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message) as raised:
        decode(body, THING)
    assert not isinstance(raised.value, UnsupportedKindError)


@pytest.mark.parametrize(
    "body",
    [
        envelope("v1", "Thing", b"", ln(3, "gzip")),
        envelope("v1", "Thing", b"", ln(4, "application/json")),
    ],
)
def test_unsupported_encodings(body: bytes) -> None:
    with pytest.raises(UnsupportedKindError):
        decode_envelope(body)


def test_envelope_names_the_kind_and_tolerates_future_fields() -> None:
    body = envelope("v1", "Thing", ln(4, "x"), ln(3, ""), ln(4, CONTENT_TYPE), ln(9, "future"))
    unknown = decode_envelope(body)
    assert (unknown.api_version, unknown.kind, unknown.raw) == ("v1", "Thing", ln(4, "x"))
    assert decode(body, THING)["note"] == "x"


# --- encoding: what gogo-protobuf's generated marshallers write ----------------------------------


def test_envelope_bytes_are_kubes() -> None:
    """runtime.Unknown as NestedMarshalTo writes it: TypeMeta, raw, then empty contentEncoding/contentType."""
    assert encode_envelope("v1", "Thing", b"\x08\x01") == (
        b"k8s\x00\x0a\x0b\x0a\x02v1\x12\x05Thing\x12\x02\x08\x01\x1a\x00\x22\x00"
    )


def test_encoding_of_a_zero_object_field_by_field() -> None:
    zero_meta = (
        ln(1, "")
        + ln(2, "")
        + ln(3, "")
        + ln(4, "")
        + ln(5, "")
        + ln(6, "")
        + vi(7, 0)
        + ln(8, b"")  # a zero Time: an empty Timestamp
    )
    assert encode_message(OBJECT_META, {}) == zero_meta
    assert encode_message(THING, {}) == (
        ln(1, zero_meta)
        + ln(2, b"")  # a struct, written empty
        + ln(3, ln(1, ""))
        + ln(4, "")
        # 5: an empty list writes nothing; 6: a nil pointer neither
        + ln(7, b"")
        + ln(8, vi(1, 0) + vi(2, 0) + ln(3, ""))  # IntOrString writes all three fields
        + ln(9, ln(1, "0"))  # the zero Quantity is "0"
        + ln(10, b"")  # a RawExtension without raw
    )


def test_encoding_values() -> None:
    obj = {
        "metadata": {
            "name": "n",
            "labels": {"b": "2", "a": "1"},  # sorted on the wire
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "deletionGracePeriodSeconds": 0,  # a pointer set to zero is written
        },
        "series": {"finalizers": ["x"]},
        "seen": "1969-12-31T23:59:59Z",  # before the epoch: negative seconds
        "port": "http",
        "size": 2,
        "raw": {"k": [1, None]},
    }
    data = encode_message(THING, obj)
    meta = decode_message(THING, data)["metadata"]
    assert meta["labels"] == {"a": "1", "b": "2"}
    assert entries(11, {"a": "1", "b": "2"}) in data
    assert ln(8, b"\x08" + varint(1_700_000_000) + b"\x10\x00") in data
    assert vi(10, 0) in data
    assert ln(6, ln(1, "x")) in data
    assert ln(7, b"\x08" + varint(-1) + b"\x10\x00") in data
    assert ln(8, vi(1, 1) + vi(2, 0) + ln(3, "http")) in data
    assert ln(9, ln(1, "2")) in data
    assert ln(10, ln(1, b'{"k":[1,null]}')) in data


def test_microtime_keeps_microseconds_and_time_drops_them() -> None:
    message = Message("T", (Field(1, "t", "time"), Field(2, "m", "microtime")))
    data = encode_message(
        message, {"t": "2023-11-14T22:13:20.5Z", "m": "2023-11-14T22:13:20.123456Z"}
    )
    assert data == ln(1, vi(1, 1_700_000_000) + vi(2, 0)) + ln(
        2, vi(1, 1_700_000_000) + vi(2, 123_456_000)
    )
    assert decode_message(message, data) == {
        "t": "2023-11-14T22:13:20Z",
        "m": "2023-11-14T22:13:20.123456Z",
    }


@pytest.mark.parametrize(
    ("message", "obj", "error"),
    [
        (THING, {"note": 1}, "Thing.note: expected a string"),
        (THING, {"rules": "x"}, "Thing.rules: expected a list"),
        (THING, {"seen": "yesterday"}, "not an RFC 3339 time"),
        (THING, {"port": 1.5}, "integer or a string"),
        (THING, {"spec": []}, "expected an object"),
        (OBJECT_META, {"labels": []}, "expected an object"),
        (OBJECT_META, {"generation": "1"}, "expected an integer"),
        (Message("B", (Field(1, "b", "bytes"),)), {"b": "%%"}, "not base64"),
    ],
)
def test_values_of_the_wrong_type_are_refused(
    message: Message, obj: dict[str, Any], error: str
) -> None:
    with pytest.raises(ProtobufError, match=error):
        encode_message(message, obj)


def test_status_list_and_frame() -> None:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'services "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "kind": "services"},
        "code": 404,
    }
    body = encode(status, STATUS)
    assert decode(body, STATUS) == status
    listed = {
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "7", "remainingItemCount": 0},
        "items": [{"metadata": {"name": "a", "creationTimestamp": None}}],
    }
    assert (
        decode(encode(listed, PARTIAL_OBJECT_METADATA_LIST), PARTIAL_OBJECT_METADATA_LIST) == listed
    )
    assert KindCodec(CONDITION).list.name == "ConditionList"
    assert frame(b"abc") == b"\x00\x00\x00\x03abc"


# --- round trips ---------------------------------------------------------------------------------

_NAMES = st.text("abcdefgh", min_size=1, max_size=6)
_TEXT = st.text(st.characters(exclude_categories=("Cs",)))  # JSON text: no lone surrogates
_SCALAR_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": _TEXT,
    "bool": st.booleans(),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "double": st.floats(allow_nan=False),
    # empty bytes are not drawn: Go itself writes []byte{} but reads it back as nothing after a JSON round trip
    "bytes": st.binary(min_size=1).map(lambda b: base64.b64encode(b).decode()),
    "time": st.integers(-62135596800, 253402300799).map(
        lambda s: decode_message(Message("T", (Field(1, "t", "time"),)), ln(1, vi(1, s)))["t"]
    ),
    "intorstring": st.one_of(st.integers(-(2**31), 2**31 - 1), _TEXT),
    "quantity": st.sampled_from(["1", "500m", "2Gi", "1e3"]),
    "raw": st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
        max_leaves=6,
    ),
}


@st.composite
def _message(draw: st.DrawFn, depth: int = 0) -> Message:
    names = draw(st.lists(_NAMES, min_size=1, max_size=5, unique=True))
    fields = []
    for number, name in enumerate(names, start=1):
        kinds: list[Any] = list(_SCALAR_VALUES)
        if depth < 2:
            kinds += ["message", "map", "list"]
        kind = draw(st.sampled_from(kinds))
        if kind == "message":
            fields.append(
                Field(number, name, draw(_message(depth + 1)), pointer=draw(st.booleans()))
            )
        elif kind == "map":
            fields.append(Field(number, name, MapOf(draw(st.sampled_from(list(_SCALAR_VALUES))))))
        elif kind == "list":
            item = draw(st.sampled_from(["string", "int64", "bool"]))
            fields.append(Field(number, name, ListOf(item) if draw(st.booleans()) else item, True))
        else:
            fields.append(
                Field(
                    number,
                    name,
                    kind,
                    pointer=draw(st.booleans()),
                    omitempty=draw(st.booleans()),
                )
            )
    return Message(f"M{depth}", tuple(draw(st.permutations(fields))))


def _value(kind: Any) -> st.SearchStrategy[Any]:
    if isinstance(kind, Message):
        return _object(kind)
    if isinstance(kind, MapOf):
        return st.dictionaries(_TEXT, _value(kind.value), max_size=3)
    if isinstance(kind, ListOf):
        return st.lists(_value(kind.item), max_size=3)
    return _SCALAR_VALUES[kind]


def _object(message: Message) -> st.SearchStrategy[dict[str, Any]]:
    optional = {}
    for spec in message.fields:
        value = _value(spec.kind)
        optional[spec.name] = st.lists(value, max_size=3) if spec.repeated else value
    return st.fixed_dictionaries({}, optional=optional)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_decoding_inverts_encoding(data: st.DataObject) -> None:
    """decode(encode(x)) is x up to Go's JSON rules (zero values of omitempty fields left out, structs and
    non-omitempty fields printed); and Go's unmarshal-marshal is the identity on what Go wrote:
    encode(decode(b)) == b for every b that encode produced."""
    message = data.draw(_message())
    obj = data.draw(_object(message))
    wire = encode_message(message, obj)
    decoded = decode_message(message, wire)
    assert encode_message(message, decoded) == wire
    assert decode_message(message, encode_message(message, decoded)) == decoded
    for spec in message.fields:
        value = obj.get(spec.name)
        if spec.name not in obj or value is None:
            continue
        if isinstance(spec.kind, Message) or spec.kind == "raw":
            continue  # nested zero fields (or raw null) follow the same rules one level down
        empty = value in ("", 0, False, [], {})
        if spec.pointer or not (spec.omitempty and empty):
            assert decoded[spec.name] == value or (spec.kind == "time" and value is None)
