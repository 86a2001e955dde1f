"""Validation causes, worded exactly as kube-apiserver words them in ``Status.details.causes``.

This is the analog of k8s.io/apimachinery/pkg/util/validation/field/errors.go (``field.Error`` and its
constructors). Clients and tests compare these strings verbatim, so the message bodies, the quoting of
bad values (Go ``%q`` for strings, ``%v`` for numbers and booleans, ``encoding/json`` for everything
else) and the float formatting follow the Go code rather than Python's ``repr``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from apiserver.machinery.gojson import go_quote

__all__ = [
    "NIL_FIELD",
    "OMIT",
    "Cause",
    "GoStruct",
    "duplicate",
    "forbidden",
    "format_bad_value",
    "go_json",
    "go_quote",
    "go_value",
    "internal_error",
    "invalid",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]

# The field kube reports for errors that have no path: ``(*field.Path)(nil).String()``.
NIL_FIELD: Final = "<nil>"

REQUIRED: Final = "FieldValueRequired"
INVALID: Final = "FieldValueInvalid"
TYPE_INVALID: Final = "FieldValueTypeInvalid"
NOT_SUPPORTED: Final = "FieldValueNotSupported"
DUPLICATE: Final = "FieldValueDuplicate"
FORBIDDEN: Final = "FieldValueForbidden"
TOO_LONG: Final = "FieldValueTooLong"
TOO_MANY: Final = "FieldValueTooMany"
INTERNAL: Final = "InternalError"


@dataclass(frozen=True, slots=True)
class Cause:
    """One ``metav1.StatusCause``: ``reason`` is the machine-readable type, ``field`` the JSON path."""

    reason: str
    message: str
    field: str

    def to_dict(self) -> dict[str, str]:
        """The cause as it appears in ``Status.details.causes``."""
        return {"reason": self.reason, "message": self.message, "field": self.field}

    def __str__(self) -> str:
        # field.Error.Error(): what kube joins into the Status message.
        return f"{self.field}: {self.message}"


class _Omit:
    """Marks a bad value that is not printed (Go's ``omitValue``)."""


OMIT: Final = _Omit()


def _body(kind: str, value: Any, detail: str) -> str:
    # field.Error.ErrorBody() for the types that print their bad value.
    text = kind if value is OMIT else f"{kind}: {format_bad_value(value)}"
    return f"{text}: {detail}" if detail else text


def required(field: str, detail: str = "") -> Cause:
    return Cause(REQUIRED, f"Required value: {detail}" if detail else "Required value", field)


def forbidden(field: str, detail: str) -> Cause:
    return Cause(FORBIDDEN, f"Forbidden: {detail}" if detail else "Forbidden", field)


def invalid(field: str, value: Any, detail: str) -> Cause:
    return Cause(INVALID, _body("Invalid value", value, detail), field)


def type_invalid(field: str, value: Any, detail: str) -> Cause:
    return Cause(TYPE_INVALID, _body("Invalid value", value, detail), field)


def duplicate(field: str, value: Any) -> Cause:
    return Cause(DUPLICATE, _body("Duplicate value", value, ""), field)


def not_supported(field: str, value: Any, valid_values: Sequence[str]) -> Cause:
    detail = ""
    if valid_values:
        detail = "supported values: " + ", ".join(go_quote(v) for v in valid_values)
    return Cause(NOT_SUPPORTED, _body("Unsupported value", value, detail), field)


def too_long(field: str, max_length: int) -> Cause:
    """The value is never printed: it may be huge (annotations, strings with ``maxLength``)."""
    if max_length >= 0:
        unit = "byte" if max_length == 1 else "bytes"
        detail = f"may not be more than {max_length} {unit}"
    else:
        detail = "value is too long"
    return Cause(TOO_LONG, f"Too long: {detail}", field)


def too_many(field: str, actual: int, max_items: int) -> Cause:
    if max_items >= 0:
        detail = f"must have at most {max_items} {'item' if max_items == 1 else 'items'}"
    else:
        detail = "too many items"
    return Cause(TOO_MANY, _body("Too many", actual if actual >= 0 else OMIT, detail), field)


def internal_error(field: str, detail: str) -> Cause:
    return Cause(INTERNAL, f"Internal error: {detail}", field)


def format_bad_value(value: Any) -> str:
    """How ``field.Error`` prints a bad value: ``%v`` for numbers and booleans, ``%q`` for strings,
    and JSON for everything else (objects, arrays, null)."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool | int | float):
        return go_value(value)
    return go_json(value)


def go_value(value: bool | int | float) -> str:
    """Go's ``%v`` of a bool, int64 or float64 (floats use ``%g`` with the shortest digits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _format_float(value, json_style=False)


_JSON_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


# Characters Go's encoder escapes; most strings (names, keys) have none and are quoted as they are.
_NEEDS_ESCAPE: Final = re.compile(r'[\x00-\x1f"\\<>&\u2028\u2029]')


def _json_string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        escaped = _JSON_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class GoStruct(dict[str, Any]):
    """A Go struct's fields in declaration order: ``json.Marshal`` writes a struct's fields so, where it
    sorts a map's keys."""


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a decoded JSON value: sorted keys (a GoStruct's in its order), no spaces, HTML-safe escapes,
    integral floats without a fraction (``1.0`` is ``1``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value, json_style=True)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        items = value.items() if isinstance(value, GoStruct) else sorted(value.items())
        return "{" + ",".join(f"{_json_string(str(k))}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _json_string(str(value))


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest decimal digits that round-trip ``value`` and the position of the decimal point
    (``digits`` is ``d1 d2 ...``, the number is ``0.d1d2... * 10**point``), like Go's ``decimal``."""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digit_tuple) + exponent
    if digits == "0":
        point = 1
    return digits, point


def _format_float(value: float, *, json_style: bool) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if value < 0 or (value == 0 and math.copysign(1.0, value) < 0) else ""
    digits, point = _shortest_digits(value)
    exp = point - 1
    if json_style:
        # encoding/json: 'f' unless the magnitude is < 1e-6 or >= 1e21, then 'e' with "e-7" not "e-07".
        magnitude = abs(value)
        use_e = magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21)
    else:
        # strconv 'g' with the shortest precision decides with an exponent threshold of 6.
        use_e = exp < -4 or exp >= 6
    if use_e:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp_sign = "-" if exp < 0 else "+"
        exp_digits = f"{abs(exp):02d}"
        if json_style and exp < 0 and exp_digits[0] == "0":
            exp_digits = exp_digits[1:]  # encoding/json cleans "e-07" up to "e-7"
        return f"{sign}{mantissa}e{exp_sign}{exp_digits}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"
