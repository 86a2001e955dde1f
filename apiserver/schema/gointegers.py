"""Integer fields of built-in kinds, as Go decodes them.

kube decodes a built-in kind's body into its Go struct before anything validates it, and encoding/json puts
into an ``int32`` or ``int64`` field only a JSON integer literal within that type's range: ``1.5``, ``3.0``,
``1e3`` and ``99999999999`` for an int32 are all refused there ("json: cannot unmarshal number 1e3 into Go
struct field LeaseSpec.spec.leaseDurationSeconds of type int32", a 400). An OpenAPI ``integer`` admits more
(any integral number of any size), so the schema validator alone would store a value no Go client can read.

The integer fields of a schema are found once per schema node (a path of property names, with ``None`` for
"every item" and "every map value"), so that an object without integers costs one dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.structural import Schema, compile_schema

_RANGES: Final = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_EVERY: Final = None
"""A path step meaning every item of an array or every value of a map."""

Step = str | None
Fields = tuple[tuple[tuple[Step, ...], str], ...]
_found: dict[int, tuple[Mapping[str, Any], Fields]] = {}
"""Integer fields by id of the schema, kept with it (so that the id cannot be another's): only built-in kinds'
schemas come here, and they live as long as the process."""


def integer_causes(obj: Any, schema: Mapping[str, Any]) -> list[Cause]:
    """A type cause for each integer field of ``obj`` that Go would not decode into its type."""
    hit = _found.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = _found[id(schema)] = (schema, tuple(_integer_fields(compile_schema(schema), ())))
    fields = hit[1]
    found: list[Cause] = []
    for path, go_type in fields:
        for field, value in _values(obj, path, ""):
            json_type = _undecodable(value, go_type)
            if json_type:
                found.append(
                    causes.type_invalid(
                        field,
                        json_type,
                        f'{field} in body must be of type {go_type}: "{json_type}"',
                    )
                )
    return found


def _integer_fields(
    schema: Schema, path: tuple[Step, ...]
) -> Iterator[tuple[tuple[Step, ...], str]]:
    if schema.int_or_string:  # intstr.IntOrString: a number is its IntVal, an int32
        yield path, "int32"
        return
    if schema.types == ("integer",):
        yield path, schema.go_integer or "int64"
        return
    for name, child in schema.properties.items():
        yield from _integer_fields(child, (*path, name))
    for each in (schema.items, schema.additional_properties):
        if each is not None:
            yield from _integer_fields(each, (*path, _EVERY))


def _values(value: Any, path: tuple[Step, ...], field: str) -> Iterator[tuple[str, Any]]:
    """The values at ``path`` under ``value``, with their field paths as kube writes them."""
    if not path:
        yield field, value
        return
    step, rest = path[0], path[1:]
    if step is not None:
        if isinstance(value, dict) and step in value:
            yield from _values(value[step], rest, f"{field}.{step}" if field else step)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _values(item, rest, f"{field}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _values(item, rest, f"{field}[{key}]")


def _undecodable(value: Any, go_type: str) -> str:
    """The Go type name of a number that does not fit ``go_type`` ("" when it fits or is not a number:
    other JSON types are the schema validator's to refuse)."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, float):
        return "float64"
    if isinstance(value, int):
        low, high = _RANGES.get(go_type, _RANGES["int64"])
        if low <= value <= high:
            return ""
        return "int64" if _RANGES["int64"][0] <= value <= _RANGES["int64"][1] else "float64"
    return ""
