"""A small OpenAPI value validator, enough to tell whether a schema's ``default`` is valid against that schema.

apiextensions rejects a CRD whose defaults would fail validation (or be pruned) when applied; checking the
same at generation time keeps an invalid default from reaching the server, where it would make every create
without that field fail. This covers type, enum, bounds, lengths, pattern, required (after nested defaults),
unknown fields and the junctors; formats are not checked.
"""

from __future__ import annotations

import functools
import json
import re
import warnings
from typing import Any

__all__ = ["go_regex", "json_kind", "regex_problem", "validate_value"]

_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")
_RE2_UNSUPPORTED = re.compile(r"\(\?<?[=!]|\\[1-9]|\(\?P=")
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


@functools.cache
def go_regex(pattern: str) -> re.Pattern[str] | None:
    """Compile a Go (RE2) pattern as Python ``re``; None when it uses RE2 syntax Python lacks (``\\pL``).

    Kubernetes validates ``pattern`` with Go's regexp, which allows inline flags anywhere, ``\\z`` and POSIX
    classes; those are translated (flags become global: close enough to tell validity and check a default).
    """
    flags = 0
    for match in _INLINE_FLAGS.finditer(pattern):
        for letter in match.group(1):
            flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "U": 0}[letter]
    translated = _INLINE_FLAGS.sub("", pattern).replace("\\z", "\\Z")
    translated = re.sub(
        r"\[:(\w+):\]", lambda m: _POSIX_CLASSES.get(m.group(1), m.group(0)), translated
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" for what RE2 reads as a plain class
        try:
            return re.compile(translated, flags)
        except re.error:
            return None


def regex_problem(pattern: str) -> str:
    """Why Kubernetes would reject ``pattern``, or "" (RE2-only syntax Python cannot read is given the benefit)."""
    if _RE2_UNSUPPORTED.search(pattern):
        return "lookarounds and backreferences are not supported by Kubernetes (Go RE2) regular expressions"
    if go_regex(pattern) is not None or re.search(r"\\[pP]", pattern):
        return ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"must be a valid regular expression, but isn't: {exc}"
    return "must be a valid regular expression"


def json_kind(value: Any) -> str:
    """The JSON type of a YAML-loaded value, with integral numbers counted as integers (as Go's JSON does)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ==, true is not 1."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        json_kind(a) in ("integer", "number") and json_kind(b) in ("integer", "number") and a == b
    )


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def validate_value(
    value: Any, schema: dict[str, Any], where: str = "", structural: bool = True
) -> list[str]:
    """Every way ``value`` fails ``schema``, each prefixed by its position inside the value (".a.b[0]: ...").

    ``structural`` is False under allOf/anyOf/oneOf/not, whose schemas restrict values without declaring them,
    so fields they do not list are not unknown there.
    """
    if value is None:
        return [] if schema.get("nullable") is True else [f"{_at(where)}must not be null"]
    problems = _type_problems(value, schema, where)
    if problems:
        return problems
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_same(value, option) for option in enum):
        shown = ", ".join(json.dumps(option) for option in enum)
        problems.append(f"{_at(where)}{json.dumps(value)} is not one of {shown}")
    kind = json_kind(value)
    if kind in ("integer", "number"):
        problems += _number_problems(value, schema, where)
    elif kind == "string":
        problems += _string_problems(value, schema, where)
    elif kind == "array":
        problems += _array_problems(value, schema, where, structural)
    elif kind == "object":
        problems += _object_problems(value, schema, where, structural)
    problems += _junctor_problems(value, schema, where)
    return problems


def _type_problems(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    kind, expected = json_kind(value), schema.get("type")
    if schema.get("x-kubernetes-int-or-string") is True:
        ok = kind in ("integer", "string")
        expected = "integer or string"
    elif expected is None:
        ok = True
    elif expected == "number":
        ok = kind in ("integer", "number")
    else:
        ok = kind == expected
    return [] if ok else [f"{_at(where)}expected {expected}, got {kind} {json.dumps(value)}"]


def _number_problems(value: float, schema: dict[str, Any], where: str) -> list[str]:
    problems = []
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    if isinstance(minimum, int | float):
        exclusive = schema.get("exclusiveMinimum") is True
        if value < minimum or (exclusive and value == minimum):
            problems.append(
                f"{_at(where)}{value} is less than {'or equal to ' if exclusive else ''}{minimum}"
            )
    if isinstance(maximum, int | float):
        exclusive = schema.get("exclusiveMaximum") is True
        if value > maximum or (exclusive and value == maximum):
            problems.append(
                f"{_at(where)}{value} is greater than {'or equal to ' if exclusive else ''}{maximum}"
            )
    multiple = schema.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0 and (value / multiple) % 1 != 0:
        problems.append(f"{_at(where)}{value} is not a multiple of {multiple}")
    return problems


def _string_problems(value: str, schema: dict[str, Any], where: str) -> list[str]:
    problems = []
    min_length, max_length = schema.get("minLength"), schema.get("maxLength")
    if isinstance(min_length, int) and len(value) < min_length:
        problems.append(f"{_at(where)}{json.dumps(value)} is shorter than {min_length} characters")
    if isinstance(max_length, int) and len(value) > max_length:
        problems.append(f"{_at(where)}{json.dumps(value)} is longer than {max_length} characters")
    pattern = schema.get("pattern")
    compiled = go_regex(pattern) if isinstance(pattern, str) else None
    if compiled is not None and compiled.search(value) is None:
        problems.append(f"{_at(where)}{json.dumps(value)} does not match {pattern}")
    return problems


def _array_problems(
    value: list[Any], schema: dict[str, Any], where: str, structural: bool
) -> list[str]:
    problems = []
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    if isinstance(min_items, int) and len(value) < min_items:
        problems.append(f"{_at(where)}has fewer than {min_items} items")
    if isinstance(max_items, int) and len(value) > max_items:
        problems.append(f"{_at(where)}has more than {max_items} items")
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            problems += validate_value(item, items, f"{where}[{index}]", structural)
    return problems


def _object_problems(
    value: dict[str, Any], schema: dict[str, Any], where: str, structural: bool
) -> list[str]:
    problems = []
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    open_ended = schema.get("x-kubernetes-preserve-unknown-fields") is True or additional is True
    embedded = schema.get("x-kubernetes-embedded-resource") is True
    for key, item in value.items():
        if key in properties:
            problems += validate_value(item, properties[key], f"{where}.{key}", structural)
        elif isinstance(additional, dict):
            problems += validate_value(item, additional, f"{where}.{key}", structural)
        elif (
            structural
            and not open_ended
            and not (embedded and key in ("apiVersion", "kind", "metadata"))
            and (properties or additional is False or schema.get("type") == "object")
        ):
            problems.append(f'{_at(where)}unknown field "{key}" (it would be pruned)')
    for name in schema.get("required") or []:
        # A required field that has its own default is filled in before validation, as apiextensions does.
        if name not in value and "default" not in properties.get(name, {}):
            problems.append(f'{_at(where)}missing required field "{name}"')
    min_props, max_props = schema.get("minProperties"), schema.get("maxProperties")
    if isinstance(min_props, int) and len(value) < min_props:
        problems.append(f"{_at(where)}has fewer than {min_props} properties")
    if isinstance(max_props, int) and len(value) > max_props:
        problems.append(f"{_at(where)}has more than {max_props} properties")
    return problems


def _junctor_problems(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    problems = []
    for sub in schema.get("allOf") or []:
        problems += validate_value(value, sub, where, structural=False)
    any_of = schema.get("anyOf") or []
    if any_of and all(validate_value(value, sub, where, structural=False) for sub in any_of):
        problems.append(f"{_at(where)}matches none of anyOf")
    one_of = schema.get("oneOf") or []
    if (
        one_of
        and sum(not validate_value(value, sub, where, structural=False) for sub in one_of) != 1
    ):
        problems.append(f"{_at(where)}does not match exactly one of oneOf")
    if isinstance(schema.get("not"), dict) and not validate_value(
        value, schema["not"], where, structural=False
    ):
        problems.append(f"{_at(where)}matches the schema under not")
    return problems
