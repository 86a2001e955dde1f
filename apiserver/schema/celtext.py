"""The text functions of cel-go's strings extension that are more than one line: ``string.format`` (its
clauses and messages, github.com/google/cel-go ext/formatting.go) and ``strings.quote``.

Values arrive as the evaluator hands them to Python: a uint is an int, a timestamp a ``datetime``, a
duration a ``timedelta`` (cel-go formats each the same way)."""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

DEFAULT_PRECISION: Final = 6
_QUOTED: Final = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}  # fmt: skip
_SUPERSCRIPTS: Final = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_CLAUSE: Final = re.compile(r"(?:\.([0-9]*))?(.)?", re.DOTALL)
_NON_FINITE: Final = frozenset({"NaN", "Infinity", "-Infinity"})


class FormatError(ValueError):
    """A format string or argument cel-go refuses (the message is cel-go's)."""


def quote(text: str) -> str:
    """strings.quote: the text in double quotes, CEL's escape sequences escaped."""
    return '"' + "".join(_QUOTED.get(ch, ch) for ch in text) + '"'


def _type_name(value: Any) -> str:
    if value is None:
        return "null_type"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, datetime.datetime):
        return "google.protobuf.Timestamp"
    if isinstance(value, datetime.timedelta):
        return "google.protobuf.Duration"
    return type(value).__name__


def _double(value: float) -> str:
    """CEL's string(double): Go's strconv.FormatFloat(f, 'g', -1, 64), the shortest digits, in exponent
    form when the exponent is below -4 or at least 6 (``1e+06``, ``1.5e-05``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    shown = "".join(map(str, digits)) or "0"
    point = len(shown) + int(exponent)  # digits before the decimal point
    minus = "-" if sign else ""
    if value == 0:
        return minus + "0"
    if not -4 <= point - 1 < 6:
        mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
        power = point - 1
        return f"{minus}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{shown}"
    if point >= len(shown):
        return minus + shown + "0" * (point - len(shown))
    return f"{minus}{shown[:point]}.{shown[point:]}"


def _timestamp(value: datetime.datetime) -> str:
    text = value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")
    return text.replace(".000000", "")


def _duration(value: datetime.timedelta) -> str:
    seconds = value.total_seconds()
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{seconds:f}".rstrip("0") + "s"


def _plain(value: Any) -> str:
    """FormatString: the %s form of a value."""
    if isinstance(value, list):
        return "[" + ", ".join(_member(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = sorted((_member(key), _member(item)) for key, item in value.items())
        return "{" + ", ".join(f"{key}:{item}" for key, item in pairs) + "}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _double(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, datetime.datetime):
        return _timestamp(value)
    if isinstance(value, datetime.timedelta):
        return _duration(value)
    if isinstance(value, int | str):
        return str(value)
    raise FormatError(
        "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types,"
        f" durations, and timestamps, was given {_type_name(value)}"
    )


def _member(value: Any) -> str:
    """A list item or map entry as a CEL literal (clauseForType and quoteForCEL)."""
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, bytes):
        return "b" + quote(value.decode("utf-8", "replace"))
    if isinstance(value, float):
        text = f"{value:.{DEFAULT_PRECISION}f}"
        return f'"{_double(value)}"' if not math.isfinite(value) else text
    if isinstance(value, datetime.datetime):
        return f'timestamp("{_timestamp(value)}")'
    if isinstance(value, datetime.timedelta):
        return f'duration("{_duration(value)}")'
    return _plain(value)


def _decimal(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(
            f"decimal clause can only be used on integers, was given {_type_name(value)}"
        )
    return str(value)


def _as_double(value: Any, clause: str) -> float:
    if isinstance(value, str) and value in _NON_FINITE:
        return float(value.replace("Infinity", "inf"))
    if not isinstance(value, float):
        raise FormatError(
            f"{clause} clause can only be used on doubles, was given {_type_name(value)}"
        )
    return value


def _fixed(precision: int | None) -> Callable[[Any], str]:
    def clause(value: Any) -> str:
        number = _as_double(value, "fixed-point")
        if not math.isfinite(number):
            return _double(number)
        return f"{number:,.{DEFAULT_PRECISION if precision is None else precision}f}"

    return clause


def _scientific(value: Any) -> str:
    """cel-go's %e: the precision lands in the width (``%%%de``), so it is always six digits, printed
    the way golang.org/x/text/message spells an exponent."""
    number = _as_double(value, "scientific")
    if not math.isfinite(number):
        return _double(number)
    mantissa, _, exponent = f"{number:.{DEFAULT_PRECISION}e}".partition("e")
    digits = exponent.lstrip("+").translate(_SUPERSCRIPTS)
    return f"{mantissa}\u202f\u00d7\u202f10{digits}"


def _binary(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if not isinstance(value, int):
        raise FormatError(
            f"only integers and bools can be formatted as binary, was given {_type_name(value)}"
        )
    return format(value, "b")


def _hex(upper: bool) -> Callable[[Any], str]:
    def clause(value: Any) -> str:
        if isinstance(value, str):
            value = value.encode()
        if isinstance(value, bytes):
            text = value.hex()
        elif isinstance(value, int) and not isinstance(value, bool):
            text = format(value, "x")
        else:
            raise FormatError(
                "only integers, byte buffers, and strings can be formatted as hex, was given"
                f" {_type_name(value)}"
            )
        return text.upper() if upper else text

    return clause


def _octal(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(
            f"octal clause can only be used on integers, was given {_type_name(value)}"
        )
    return format(value, "o")


def _clause(verb: str, precision: int | None) -> Callable[[Any], str]:
    clauses: dict[str, Callable[[Any], str]] = {
        "s": _plain, "d": _decimal, "f": _fixed(precision), "e": _scientific, "b": _binary,
        "x": _hex(False), "X": _hex(True), "o": _octal,
    }  # fmt: skip
    found = clauses.get(verb)
    if found is None:
        raise FormatError(
            f'could not parse formatting clause: unrecognized formatting clause "{verb}"'
        )
    return found


def format_string(template: str, args: list[Any]) -> str:
    """<string>.format(<list>): cel-go's parseFormatString."""
    if not isinstance(template, str) or not isinstance(args, list):
        raise TypeError("no such overload")
    out: list[str] = []
    position, used = 0, 0
    while position < len(template):
        ch = template[position]
        if ch != "%":
            out.append(ch)
            position += 1
            continue
        if template[position + 1 : position + 2] == "%":
            out.append("%")
            position += 2
            continue
        if used >= len(args):
            raise FormatError(f"index {used} out of range")
        if position + 1 >= len(template):
            raise FormatError("unexpected end of string")
        match = _CLAUSE.match(template, position + 1)
        assert match is not None  # every part of the pattern is optional
        digits, verb = match.group(1), match.group(2)
        if digits is not None and verb is None:
            raise FormatError(
                "could not parse formatting clause: error while parsing precision: could not find"
                " end of precision specifier"
            )
        if digits == "":
            raise FormatError(
                "could not parse formatting clause: error while parsing precision: error while"
                ' converting precision to integer: strconv.Atoi: parsing "": invalid syntax'
            )
        precision = int(digits) if digits else None
        try:
            out.append(_clause(verb or "", precision)(args[used]))
        except FormatError as error:
            if str(error).startswith("could not parse"):
                raise
            raise FormatError(f"error during formatting: {error}") from None
        position, used = match.end(), used + 1
    return "".join(out)
