"""A tiny proto2 writer for tests: hand-encoded messages, written independently of the codec under test."""

from __future__ import annotations


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


def ln(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def vi(number: int, value: int) -> bytes:
    """A varint field."""
    return varint(number << 3) + varint(value)


def entries(number: int, mapping: dict[str, bytes | str]) -> bytes:
    """The entries of a map field, in the given order."""
    return b"".join(ln(number, ln(1, key) + ln(2, value)) for key, value in mapping.items())


def time(seconds: int, nanos: int = 0) -> bytes:
    """A Timestamp message."""
    return vi(1, seconds) + (vi(2, nanos) if nanos else b"")


def envelope(api_version: str, kind: str, raw: bytes, *extra: bytes) -> bytes:
    """``k8s\\0`` + runtime.Unknown."""
    return b"k8s\x00" + ln(1, ln(1, api_version) + ln(2, kind)) + ln(2, raw) + b"".join(extra)
