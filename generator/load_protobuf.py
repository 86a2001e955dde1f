"""Reading a compact field spec's ``protobuf`` key: the field's number in its object's message, and the Go
rules of the field where they differ from the default (docs/definitions.md, "Protobuf field numbers").

``protobuf: 3`` or ``protobuf: {number: 3, pointer: true, omitEmpty: false, message: MicroTime}``.
"""

from __future__ import annotations

from typing import Any

from generator.definition import JsonPath, ProtobufTag
from generator.load_reader import DocumentReader, describe

__all__ = ["MAX_FIELD_NUMBER", "PROTOBUF_KEYS", "TAGGED_MESSAGES", "read_protobuf_tag"]

PROTOBUF_KEYS = ("number", "pointer", "omitEmpty", "message")
TAGGED_MESSAGES = {"MicroTime": "date-time"}
"""Messages a field may name with ``message:``, and the type they stand for: metav1.MicroTime is printed to the
microsecond where metav1.Time (every other date-time) is printed to the second."""
MAX_FIELD_NUMBER = (1 << 29) - 1
RESERVED_NUMBERS = range(19000, 20000)


def read_protobuf_tag(reader: DocumentReader, value: Any, path: JsonPath) -> ProtobufTag | None:
    """The tag a ``protobuf`` value declares, or None (with an error) when it is malformed."""
    if isinstance(value, int) and not isinstance(value, bool):
        return ProtobufTag(number=value) if _valid_number(reader, value, path) else None
    if not isinstance(value, dict):
        reader.error(
            path,
            f"expected a field number or a mapping with number, pointer, omitEmpty, message; "
            f"got {describe(value)}",
        )
        return None
    stanza = reader.mapping(value, path, PROTOBUF_KEYS, required=("number",))
    if stanza is None or "number" not in stanza:
        return None
    number = reader.integer(stanza["number"], (*path, "number"))
    if number is None or not _valid_number(reader, number, (*path, "number")):
        return None
    omit_empty = None
    if stanza.get("omitEmpty") is not None:
        omit_empty = reader.boolean(stanza["omitEmpty"], (*path, "omitEmpty"))
    message = ""
    if stanza.get("message") is not None:
        message = reader.choice(stanza["message"], (*path, "message"), TAGGED_MESSAGES) or ""
    return ProtobufTag(
        number=number,
        pointer=reader.opt_bool(stanza, "pointer", path, False),
        omit_empty=omit_empty,
        message=message,
    )


def _valid_number(reader: DocumentReader, number: int, path: JsonPath) -> bool:
    if not 1 <= number <= MAX_FIELD_NUMBER:
        reader.error(
            path, f"a protobuf field number is between 1 and {MAX_FIELD_NUMBER}, got {number}"
        )
        return False
    if number in RESERVED_NUMBERS:
        reader.error(path, f"protobuf reserves field numbers 19000-19999 for itself, got {number}")
        return False
    return True
