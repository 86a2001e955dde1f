"""Encode a Swagger 2.0 document as the gnostic ``openapi_v2.Document`` protobuf that kubectl reads.

kubectl 1.27 and 1.28 ask /openapi/v2 for ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``
only and unmarshal the body as ``openapi_v2.Document`` (github.com/google/gnostic-models,
openapiv2/OpenAPIv2.proto); a JSON body fails with "proto: cannot parse invalid wire-format data"
(API-CONVENTIONS.md §4.2). The messages below are that file's field numbers, written as tables from JSON
keys to (field number, encoder), with the oneof messages as small functions. Conventions of gnostic's own
JSON-to-protobuf compiler that kubectl depends on:

- keys starting with ``x-`` become ``vendor_extension`` entries (``NamedAny``) whose ``Any.yaml`` holds
  the value as text; kube-openapi reads them back with a YAML parser, so the JSON text written here works;
- ``default``, ``enum`` and ``example`` are ``Any`` values in the same way;
- ``$ref`` is the ``_ref`` field, a schema's ``type`` a ``TypeItem`` list, ``items`` an ``ItemsItem`` list.

The message is proto3: scalar fields equal to their default are not written, oneof members and
sub-messages always are. JSON keys the tables do not know are dropped.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from apiserver.encoding.protobuf import length_delimited, varint

# What kubectl asks for, and what kube-apiserver answers with: the "@" of the request's media type makes
# Go's mime.ParseMediaType fail, and client-go parses every response's Content-Type, so the answer must
# use the dotted form (an "@" there fails the command with "mime: unexpected content after media subtype").
ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

Encoder = Callable[[int, Any], bytes]


# --- wire format (varints and length-delimited fields: apiserver.encoding.protobuf's writers) ------


def _key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def _string(number: int, value: Any) -> bytes:
    return length_delimited(number, str(value).encode()) if value != "" else b""


def _strings(number: int, values: Any) -> bytes:
    items = [values] if isinstance(values, str) else values
    return b"".join(length_delimited(number, str(item).encode()) for item in items)


def _bool(number: int, value: Any) -> bytes:
    return _key(number, 0) + b"\x01" if value else b""


def _int64(number: int, value: Any) -> bytes:
    return _key(number, 0) + varint(int(value)) if value else b""


def _double(number: int, value: Any) -> bytes:
    return _key(number, 1) + struct.pack("<d", float(value)) if value else b""


def _any(number: int, value: Any) -> bytes:
    """gnostic's Any: field 2 is the value as YAML text (JSON is valid YAML flow syntax)."""
    return length_delimited(number, _string(2, json.dumps(value, ensure_ascii=False)))


def _repeated(encoder: Encoder) -> Encoder:
    """A repeated field: one occurrence per element of a JSON list."""
    return lambda number, values: b"".join(encoder(number, value) for value in values)


_anys = _repeated(_any)


# --- table-driven messages -----------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """A message whose JSON object keys map to fields; ``extensions`` numbers its vendor_extension."""

    fields: Mapping[str, tuple[int, Encoder]]
    extensions: int | None = None


def encode(message: Message, value: Mapping[str, Any]) -> bytes:
    out = bytearray()
    for key, (number, encoder) in message.fields.items():
        if key in value:
            out += encoder(number, value[key])
    if message.extensions is not None:
        for key, item in value.items():
            if key.startswith("x-"):
                out += length_delimited(message.extensions, _string(1, key) + _any(2, item))
    return bytes(out)


def _one(get: Callable[[], Message]) -> Encoder:
    """A sub-message field; ``get`` defers the lookup so that messages can refer to later ones."""
    return lambda number, value: length_delimited(number, encode(get(), value))


def _named(value_encoder: Encoder) -> Encoder:
    """A JSON object as gnostic's ordered ``Named*`` list: repeated {1 name, 2 value}."""

    def encoder(number: int, mapping: Any) -> bytes:
        return b"".join(
            length_delimited(number, _string(1, name) + value_encoder(2, item))
            for name, item in mapping.items()
        )

    return encoder


def _wrapped(number_inside: int, inner: Encoder) -> Encoder:
    """A message with one field, like ``Definitions { repeated NamedSchema additional_properties = 1 }``."""
    return lambda number, value: length_delimited(number, inner(number_inside, value))


def _oneof(choose: Callable[[Any], tuple[int, Encoder]]) -> Encoder:
    """A message made of one ``oneof``; ``choose`` picks the member number and encoder for a value."""

    def encoder(number: int, value: Any) -> bytes:
        member, member_encoder = choose(value)
        return length_delimited(number, member_encoder(member, value))

    return encoder


def _one_schema(number: int, value: Any) -> bytes:
    return _one(lambda: SCHEMA)(number, value)


def _json_reference(number: int, value: Any) -> bytes:
    return length_delimited(
        number, _string(1, value["$ref"]) + _string(2, value.get("description", ""))
    )


def _schema_or_bool(value: Any) -> tuple[int, Encoder]:
    if isinstance(value, bool):  # a oneof member is written even when false
        return 2, lambda number, flag: _key(number, 0) + varint(int(flag))
    return 1, _one_schema


def _schema_list(number: int, value: Any) -> bytes:
    items = value if isinstance(value, list) else [value]
    return length_delimited(number, b"".join(_one_schema(1, item) for item in items))


def _ref_or(encoder: Encoder) -> Callable[[Any], tuple[int, Encoder]]:
    """The chooser of ParametersItem and ResponseValue: a JSON reference (2) or the thing itself (1)."""
    return lambda value: (2, _json_reference) if "$ref" in value else (1, encoder)


ANY_MAP = _wrapped(1, _named(_any))  # Default, Examples, VendorExtension: repeated NamedAny
EXTERNAL_DOCS = Message({"description": (1, _string), "url": (2, _string)}, extensions=3)
XML = Message(
    {
        "name": (1, _string),
        "namespace": (2, _string),
        "prefix": (3, _string),
        "attribute": (4, _bool),
        "wrapped": (5, _bool),
    },
    extensions=6,
)
SCHEMA = Message(
    {
        "$ref": (1, _string),
        "format": (2, _string),
        "title": (3, _string),
        "description": (4, _string),
        "default": (5, _any),
        "multipleOf": (6, _double),
        "maximum": (7, _double),
        "exclusiveMaximum": (8, _bool),
        "minimum": (9, _double),
        "exclusiveMinimum": (10, _bool),
        "maxLength": (11, _int64),
        "minLength": (12, _int64),
        "pattern": (13, _string),
        "maxItems": (14, _int64),
        "minItems": (15, _int64),
        "uniqueItems": (16, _bool),
        "maxProperties": (17, _int64),
        "minProperties": (18, _int64),
        "required": (19, _strings),
        "enum": (20, _anys),
        "additionalProperties": (21, _oneof(_schema_or_bool)),
        "type": (22, _wrapped(1, _strings)),
        "items": (23, _schema_list),
        "allOf": (24, _repeated(_one_schema)),
        "properties": (25, _wrapped(1, _named(_one_schema))),
        "discriminator": (26, _string),
        "readOnly": (27, _bool),
        "xml": (28, _one(lambda: XML)),
        "externalDocs": (29, _one(lambda: EXTERNAL_DOCS)),
        "example": (30, _any),
    },
    extensions=31,
)
FILE_SCHEMA = Message(
    {
        "format": (1, _string),
        "title": (2, _string),
        "description": (3, _string),
        "default": (4, _any),
        "required": (5, _strings),
        "type": (6, _string),
        "readOnly": (7, _bool),
        "externalDocs": (8, _one(lambda: EXTERNAL_DOCS)),
        "example": (9, _any),
    },
    extensions=10,
)


def _validations(first: int) -> dict[str, tuple[int, Encoder]]:
    """The keywords of a non-body parameter or header, numbered consecutively from ``first`` (``type``).

    PrimitivesItems, Header and the four parameter sub-schemas list them in the same order.
    """
    names: list[tuple[str, Encoder]] = [
        ("type", _string),
        ("format", _string),
        ("items", _one(lambda: PRIMITIVES_ITEMS)),
        ("collectionFormat", _string),
        ("default", _any),
        ("maximum", _double),
        ("exclusiveMaximum", _bool),
        ("minimum", _double),
        ("exclusiveMinimum", _bool),
        ("maxLength", _int64),
        ("minLength", _int64),
        ("pattern", _string),
        ("maxItems", _int64),
        ("minItems", _int64),
        ("uniqueItems", _bool),
        ("enum", _anys),
        ("multipleOf", _double),
    ]
    return {name: (first + offset, encoder) for offset, (name, encoder) in enumerate(names)}


PRIMITIVES_ITEMS = Message(_validations(1), extensions=18)
HEADER = Message({**_validations(1), "description": (18, _string)}, extensions=19)
_PARAMETER_HEAD = {
    "required": (1, _bool),
    "in": (2, _string),
    "description": (3, _string),
    "name": (4, _string),
}
# header and path: head, then the validations from 5; formData and query add allowEmptyValue as 5.
HEADER_OR_PATH_PARAMETER = Message({**_PARAMETER_HEAD, **_validations(5)}, extensions=22)
QUERY_OR_FORM_PARAMETER = Message(
    {**_PARAMETER_HEAD, "allowEmptyValue": (5, _bool), **_validations(6)}, extensions=23
)
BODY_PARAMETER = Message(
    {
        "description": (1, _string),
        "name": (2, _string),
        "in": (3, _string),
        "required": (4, _bool),
        "schema": (5, _one_schema),
    },
    extensions=6,
)
NON_BODY_MEMBERS = {
    "header": (1, _one(lambda: HEADER_OR_PATH_PARAMETER)),
    "formData": (2, _one(lambda: QUERY_OR_FORM_PARAMETER)),
    "query": (3, _one(lambda: QUERY_OR_FORM_PARAMETER)),
    "path": (4, _one(lambda: HEADER_OR_PATH_PARAMETER)),
}


def _parameter_member(value: Any) -> tuple[int, Encoder]:
    if value.get("in") == "body":
        return 1, _one(lambda: BODY_PARAMETER)
    member = NON_BODY_MEMBERS.get(value.get("in", ""))
    if member is None:
        raise ValueError(f"parameter {value.get('name')!r}: unknown location {value.get('in')!r}")
    return 2, _oneof(lambda _: member)


PARAMETER = _oneof(_parameter_member)
PARAMETERS_ITEM = _oneof(_ref_or(PARAMETER))
RESPONSE = Message(
    {
        "description": (1, _string),
        "schema": (
            2,
            _oneof(
                lambda s: (
                    (2, _one(lambda: FILE_SCHEMA)) if s.get("type") == "file" else (1, _one_schema)
                )
            ),
        ),
        "headers": (3, _wrapped(1, _named(_one(lambda: HEADER)))),
        "examples": (4, ANY_MAP),
    },
    extensions=5,
)
RESPONSES = Message({"codes": (1, _named(_oneof(_ref_or(_one(lambda: RESPONSE)))))}, extensions=2)


def _responses(number: int, value: Any) -> bytes:
    """Responses is {code: response} plus x- keys; the codes are its ``response_code`` list."""
    codes = {code: r for code, r in value.items() if not code.startswith("x-")}
    extensions = {key: v for key, v in value.items() if key.startswith("x-")}
    return length_delimited(number, encode(RESPONSES, {"codes": codes, **extensions}))


SECURITY_REQUIREMENT = _wrapped(1, _named(_wrapped(1, _strings)))  # NamedStringArray{StringArray}
OPERATION = Message(
    {
        "tags": (1, _strings),
        "summary": (2, _string),
        "description": (3, _string),
        "externalDocs": (4, _one(lambda: EXTERNAL_DOCS)),
        "operationId": (5, _string),
        "produces": (6, _strings),
        "consumes": (7, _strings),
        "parameters": (8, _repeated(PARAMETERS_ITEM)),
        "responses": (9, _responses),
        "schemes": (10, _strings),
        "deprecated": (11, _bool),
        "security": (12, _repeated(SECURITY_REQUIREMENT)),
    },
    extensions=13,
)
PATH_ITEM = Message(
    {
        "$ref": (1, _string),
        **{
            method: (number, _one(lambda: OPERATION))
            for number, method in enumerate(
                ("get", "put", "post", "delete", "options", "head", "patch"), start=2
            )
        },
        "parameters": (9, _repeated(PARAMETERS_ITEM)),
    },
    extensions=10,
)


def _paths(number: int, value: Any) -> bytes:
    """Paths is {path: item} plus x- keys: vendor_extension = 1, path = 2."""
    payload = b"".join(
        length_delimited(2, _string(1, path) + _one(lambda: PATH_ITEM)(2, item))
        for path, item in value.items()
        if not path.startswith("x-")
    )
    extensions = {key: item for key, item in value.items() if key.startswith("x-")}
    return length_delimited(number, encode(Message({}, extensions=1), extensions) + payload)


def _security_scheme(value: Any) -> tuple[int, Encoder]:
    kind = value.get("type")
    if kind == "basic":
        return 1, _one(lambda: BASIC_SECURITY)
    if kind == "apiKey":
        return 2, _one(lambda: API_KEY_SECURITY)
    flows = {"implicit": 3, "password": 4, "application": 5, "accessCode": 6}
    flow = value.get("flow", "")
    if kind != "oauth2" or flow not in flows:
        raise ValueError(f"unknown security definition type {kind!r} (flow {flow!r})")
    return flows[flow], _one(lambda: OAUTH2_SECURITY[flow])


BASIC_SECURITY = Message({"type": (1, _string), "description": (2, _string)}, extensions=3)
API_KEY_SECURITY = Message(
    {"type": (1, _string), "name": (2, _string), "in": (3, _string), "description": (4, _string)},
    extensions=5,
)
_OAUTH2_HEAD = {
    "type": (1, _string),
    "flow": (2, _string),
    "scopes": (3, _wrapped(1, _named(_string))),
}
OAUTH2_SECURITY = {
    "implicit": Message(
        {**_OAUTH2_HEAD, "authorizationUrl": (4, _string), "description": (5, _string)},
        extensions=6,
    ),
    "password": Message(
        {**_OAUTH2_HEAD, "tokenUrl": (4, _string), "description": (5, _string)}, extensions=6
    ),
    "application": Message(
        {**_OAUTH2_HEAD, "tokenUrl": (4, _string), "description": (5, _string)}, extensions=6
    ),
    "accessCode": Message(
        {
            **_OAUTH2_HEAD,
            "authorizationUrl": (4, _string),
            "tokenUrl": (5, _string),
            "description": (6, _string),
        },
        extensions=7,
    ),
}
CONTACT = Message({"name": (1, _string), "url": (2, _string), "email": (3, _string)}, extensions=4)
LICENSE = Message({"name": (1, _string), "url": (2, _string)}, extensions=3)
INFO = Message(
    {
        "title": (1, _string),
        "version": (2, _string),
        "description": (3, _string),
        "termsOfService": (4, _string),
        "contact": (5, _one(lambda: CONTACT)),
        "license": (6, _one(lambda: LICENSE)),
    },
    extensions=7,
)
TAG = Message(
    {
        "name": (1, _string),
        "description": (2, _string),
        "externalDocs": (3, _one(lambda: EXTERNAL_DOCS)),
    },
    extensions=4,
)
DOCUMENT = Message(
    {
        "swagger": (1, _string),
        "info": (2, _one(lambda: INFO)),
        "host": (3, _string),
        "basePath": (4, _string),
        "schemes": (5, _strings),
        "consumes": (6, _strings),
        "produces": (7, _strings),
        "paths": (8, _paths),
        "definitions": (9, _wrapped(1, _named(_one_schema))),
        "parameters": (10, _wrapped(1, _named(PARAMETER))),
        "responses": (11, _wrapped(1, _named(_one(lambda: RESPONSE)))),
        "security": (12, _repeated(SECURITY_REQUIREMENT)),
        "securityDefinitions": (13, _wrapped(1, _named(_oneof(_security_scheme)))),
        "tags": (14, _repeated(_one(lambda: TAG))),
        "externalDocs": (15, _one(lambda: EXTERNAL_DOCS)),
    },
    extensions=16,
)


def encode_swagger(document: Mapping[str, Any]) -> bytes:
    """The gnostic ``openapi_v2.Document`` bytes for a Swagger 2.0 JSON document."""
    return encode(DOCUMENT, document)
