"""JSON values written as Go writes them: ``fmt.Print`` (%v) of a scalar and ``encoding/json``'s ``Marshal``.

Table cells of CRD string columns are text that client-go's JSONPath printer made from decoded JSON (kube's
tableconvertor): scalars through ``fmt``, maps and slices through ``json.Marshal``. Python's own renderings differ
(``{'app': 'web'}``, ``True``, ``1e+16``), so clients would see another server's cells.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

# encoding/json's HTML-safe escaping (json.Marshal escapes these even outside HTML) and JavaScript's separators.
_HTML_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _digits(value: float) -> tuple[str, int]:
    """The shortest decimal digits that round-trip ``value`` (positive, finite) and its decimal point position."""
    _, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    return text, len(text) + int(exponent)


def _exponent_form(digits: str, point: int) -> str:
    """strconv's %e with shortest precision: d.ddde±XX (at least two exponent digits)."""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exponent = point - 1
    return f"{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def _fixed_form(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _special(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    return None


def go_float(value: float) -> str:
    """``fmt.Sprint(float64)``: %g with the shortest digits, exponent form below 1e-4 or from 1e6 up."""
    special = _special(value)
    if special is not None:
        return special
    digits, point = _digits(abs(value))
    sign = "-" if value < 0 else ""
    if point - 1 < -4 or point - 1 >= 6:
        return sign + _exponent_form(digits, point)
    return sign + _fixed_form(digits, point)


def _json_float(value: float) -> str:
    """encoding/json's float64: fixed notation between 1e-6 and 1e21, else exponent form (``e-7``, ``e+21``)."""
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    digits, point = _digits(abs(value))
    sign = "-" if value < 0 else ""
    if 1e-6 <= abs(value) < 1e21:
        return sign + _fixed_form(digits, point)
    text = _exponent_form(digits, point)
    if text[-4:-1] == "e-0":  # json cleans e-07 up to e-7
        text = text[:-2] + text[-1]
    return sign + text


def _json_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _HTML_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON value: compact, map keys sorted, HTML characters escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        members = (f"{_json_string(str(k))}:{go_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(members) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def go_text(value: Any) -> str:
    """client-go JSONPath's text of one value: JSON for maps and slices, ``fmt.Print`` for scalars, and text/
    template's ``<no value>`` for a null."""
    if value is None:
        return "<no value>"
    if isinstance(value, dict | list | tuple):
        return go_json(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)
