"""OpenAPI v3 value validation of a custom resource, as kube-apiserver does it for CRDs.

A port of k8s.io/kube-openapi pkg/validation/validate (``SchemaValidator`` with its type, schema-props,
string, format, number, slice, common and object validators, and the messages of
pkg/validation/errors/schema.go), followed by apiextensions-apiserver's
``kubeOpenAPIResultToFieldErrors`` (pkg/apiserver/validation/validation.go), which turns those errors
into the causes clients see. The port keeps the Go evaluation order, which decides both the order of
causes and, through "match counts", which alternative of an ``anyOf``/``oneOf`` is reported when none
matches. The one liberty: Go walks ``properties`` in random map order; this walks them in declaration
order so that output is deterministic.

``x-kubernetes-validations`` (CEL) rules are evaluated by apiserver.schema.cel, after this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.acceptance import accepts
from apiserver.schema.causes import Cause, go_json, go_quote, go_value
from apiserver.schema.formats import check_format
from apiserver.schema.structural import Schema

__all__ = ["deep_equal", "validate_values"]

_IN: Final = "body"
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_MAX_JSON_INT_FLOAT: Final = float(2**53 - 1)

# kube-openapi error codes that apiextensions-apiserver maps to a specific cause type.
_REQUIRED: Final = "required"
_ENUM: Final = "enum"
_TOO_LONG: Final = "tooLong"
_MAX_ITEMS: Final = "maxItems"
_TOO_MANY_PROPERTIES: Final = "tooManyProperties"
_INVALID_TYPE: Final = "invalidType"
_OTHER: Final = "other"
_COMPOSITE: Final = "composite"  # errors.New(...): not a *Validation, reported at field "<nil>"


@dataclass(frozen=True, slots=True)
class _Error:
    """One kube-openapi error: ``name`` is its path, ``message`` its ``Error()`` text."""

    code: str
    name: str
    message: str
    value: Any = None
    valid: Any = None
    values: tuple[Any, ...] = ()


def _named(name: str) -> str:
    # The "%s in %s" prefix of every kube-openapi message ("in" is always "body" here).
    return f"{name} in {_IN}"


def _invalid_type(name: str, type_name: str, value: Any) -> _Error:
    if isinstance(value, str):
        message = f"{_named(name)} must be of type {type_name}: {go_quote(value)}"
    else:
        message = f"{_named(name)} must be of type {type_name}"
    return _Error(_INVALID_TYPE, name, message, value)


_STR: Final = "string"
_INT: Final = "integer"
_FLOAT: Final = "number"
_LIST: Final = "array"
_DICT: Final = "object"
_BOOL: Final = "boolean"
# Decoded JSON has exactly these types; anything else is classified by isinstance.
_KINDS: Final[dict[type, str]] = {
    str: _STR,
    int: _INT,
    float: _FLOAT,
    list: _LIST,
    dict: _DICT,
    bool: _BOOL,
}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return _BOOL
    for cls, kind in _KINDS.items():
        if isinstance(value, cls):
            return kind
    return ""


def _is_json_integer(value: float) -> bool:
    # swag.IsFloat64AJSONInteger
    if math.isnan(value) or math.isinf(value) or abs(value) > _MAX_JSON_INT_FLOAT:
        return False
    return value == math.trunc(value)


def _json_type(value: Any) -> tuple[str, str]:
    """typeValidator.schemaInfoForType for decoded JSON: the JSON type and the Go-implied format."""
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, str):
        return "string", ""
    if isinstance(value, int):
        # Go decodes integers beyond int64 as float64.
        return ("integer", "int64") if _INT64_MIN <= value <= _INT64_MAX else ("number", "float64")
    if isinstance(value, float):
        return "number", "float64"
    if isinstance(value, list):
        return "array", ""
    if isinstance(value, dict):
        return "object", ""
    return "", ""


def _json_equal(a: Any, b: Any) -> bool:
    """Enum membership: JSON equality, where 1 and 1.0 are equal but true and 1 are not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


class _Validator:
    """Validation of one object: the errors it finds, in kube-openapi's order."""

    __slots__ = ()

    def validate(self, s: Schema, data: Any, path: str, errs: list[_Error]) -> int:
        """``SchemaValidator.Validate``: appends the errors and returns the result's match count.

        The match count (one per validator that applied, plus what nested validators counted) only
        matters to pick the failure ``anyOf``/``oneOf`` report; keywords absent from the schema add
        their count without running.
        """
        if data is None:
            count = 0
            if s.checks_type:
                count += self._type(s, data, path, errs)
            if s.enum is not None:
                self._enum(s, data, path, errs)
            return count

        kind = _KINDS.get(type(data)) or _kind(data)
        count = 3  # schema-props' own match, its result.Inc() and the final result.Inc()
        if s.checks_type:
            if type(data) in s.python_types and (
                kind is not _INT or _INT64_MIN <= data <= _INT64_MAX
            ):
                count += 2
            else:
                count += self._type(s, data, path, errs) + 1
        if s.composed:
            count += self._schema_props(s, data, path, errs) - 1
        if kind is _STR:
            count += 1
            if s.checks_strings:
                self._string(s, data, path, errs)
            if s.checks_format:
                count += 1
                if not check_format(s.format, data):
                    errs.append(_invalid_type(path, s.format, data))
        elif kind is _INT or kind is _FLOAT:
            count += 2
            if s.checks_numbers:
                self._number(s, data, path, errs)
        elif kind is _LIST:
            count += 2
            if s.checks_slice:
                count += self._slice(s, data, path, errs) - 1
        count += 1
        if s.enum is not None:
            self._enum(s, data, path, errs)
        if kind is _DICT:
            count += 1
            if s.checks_object:
                count += self._object(s, data, path, errs)
        return count

    @staticmethod
    def _type(s: Schema, data: Any, path: str, errs: list[_Error]) -> int:
        """typeValidator: 1 if the type matches (its result counts one match), else 0."""
        types = s.types
        if data is None:
            if types and "null" not in types and not s.nullable:
                errs.append(_invalid_type(path, ",".join(types), "null"))
                return 0
            return 1
        sch_type, fmt = _json_type(data)
        is_float_int = sch_type == "number" and "integer" in types and _is_json_integer(float(data))
        is_int_float = sch_type == "integer" and "number" in types
        is_text_or_array = isinstance(data, str | list)
        if (
            not is_text_or_array
            and s.format
            and not (sch_type in types or fmt == s.format or is_float_int or is_int_float)
        ):
            errs.append(_invalid_type(path, s.format, fmt))
            return 0
        if "number" not in types and "integer" not in types and s.format and is_text_or_array:
            return 1
        if not (sch_type in types or is_float_int or is_int_float):
            errs.append(_invalid_type(path, ",".join(types), sch_type))
            return 0
        return 1

    def _schema_props(self, s: Schema, data: Any, path: str, errs: list[_Error]) -> int:
        """schemaPropsValidator: allOf, anyOf, oneOf and not, evaluated at the same path."""
        count = 1
        if s.any_of:
            best: tuple[list[_Error], int] | None = None
            first_success: int | None = None
            for clause in s.any_of:
                sub: list[_Error] = []
                sub_count = self.validate(clause, data, path, sub)
                if not sub:
                    best, first_success = None, sub_count
                    break
                if best is None or sub_count > best[1]:
                    best = (sub, sub_count)
            if first_success is None:
                errs.append(
                    _composite(f"{go_quote(path)} must validate at least one schema (anyOf)")
                )
            if best is not None:
                errs.extend(best[0])
                count += best[1]
            elif first_success is not None:
                count += first_success
        if s.one_of:
            best = None
            first_count: int | None = None
            valid = 0
            for clause in s.one_of:
                sub = []
                sub_count = self.validate(clause, data, path, sub)
                if not sub:
                    valid += 1
                    best = None
                    if first_count is None:
                        first_count = sub_count
                    continue
                if valid == 0 and (best is None or sub_count > best[1]):
                    best = (sub, sub_count)
            if valid != 1:
                detail = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                errs.append(
                    _composite(
                        f"{go_quote(path)} must validate one and only one schema (oneOf). {detail}"
                    )
                )
                if best is not None:
                    errs.extend(best[0])
                    count += best[1]
            elif first_count is not None:
                count += first_count
        if s.all_of:
            valid = 0
            for clause in s.all_of:
                sub = []
                count += self.validate(clause, data, path, sub)
                if not sub:
                    valid += 1
                errs.extend(sub)
            if valid != len(s.all_of):
                extra = ". None validated" if valid == 0 else ""
                errs.append(
                    _composite(f"{go_quote(path)} must validate all the schemas (allOf){extra}")
                )
        if s.not_ is not None:
            sub = []
            self.validate(s.not_, data, path, sub)
            if not sub:
                errs.append(_composite(f"{go_quote(path)} must not validate the schema (not)"))
        return count

    @staticmethod
    def _string(s: Schema, data: str, path: str, errs: list[_Error]) -> None:
        """stringValidator: stops at the first failure (maxLength, minLength, then pattern)."""
        if s.max_length is not None and len(data) > s.max_length:
            message = f"{_named(path)} should be at most {s.max_length} chars long"
            errs.append(_Error(_TOO_LONG, path, message, data, valid=s.max_length))
            return
        if s.min_length is not None and len(data) < s.min_length:
            message = f"{_named(path)} should be at least {s.min_length} chars long"
            errs.append(_Error(_OTHER, path, message, data))
            return
        if s.pattern is None:
            return
        if isinstance(s.pattern, str):  # failed to compile
            message = f"{_named(path)} should match '{s.pattern_source}, but pattern is invalid: {s.pattern}'"
            errs.append(_Error(_OTHER, path, message, data))
        elif s.pattern.search(data) is None:
            message = f"{_named(path)} should match '{s.pattern_source}'"
            errs.append(_Error(_OTHER, path, message, data))

    @staticmethod
    def _number(s: Schema, data: int | float, path: str, errs: list[_Error]) -> None:
        """numberValidator: multipleOf, minimum, maximum; int64 data compares with truncated bounds."""
        is_int = isinstance(data, int) and _INT64_MIN <= data <= _INT64_MAX
        if not is_int:
            data = float(data)
        if s.multiple_of is not None:
            factor: int | float = math.trunc(s.multiple_of) if is_int else float(s.multiple_of)
            if s.multiple_of < 0:
                message = (
                    f"factor MultipleOf declared for {path} must be positive: {go_value(factor)}"
                )
                errs.append(_Error(_OTHER, path, message, factor))
            elif is_int and factor != 0:
                assert isinstance(data, int) and isinstance(factor, int)
                if data % factor != 0:  # Go: data/factor*factor != data; same divisibility test
                    errs.append(_not_multiple(path, factor, data))
            elif not is_int and factor != 0:
                mult = 1 / factor * data if factor < 1 else data / factor
                if not _is_json_integer(mult):
                    errs.append(_not_multiple(path, factor, data))
        if s.minimum is not None:
            bound: int | float = math.trunc(s.minimum) if is_int else float(s.minimum)
            if data < bound or (s.exclusive_minimum and data <= bound):
                word = "greater than" if s.exclusive_minimum else "greater than or equal to"
                message = f"{_named(path)} should be {word} {go_value(bound)}"
                errs.append(_Error(_OTHER, path, message, data))
        if s.maximum is not None:
            bound = math.trunc(s.maximum) if is_int else float(s.maximum)
            if data > bound or (s.exclusive_maximum and data >= bound):
                word = "less than" if s.exclusive_maximum else "less than or equal to"
                message = f"{_named(path)} should be {word} {go_value(bound)}"
                errs.append(_Error(_OTHER, path, message, data))

    def _slice(self, s: Schema, data: list[Any], path: str, errs: list[_Error]) -> int:
        """schemaSliceValidator: items first, then minItems, maxItems and uniqueItems."""
        count = 1
        if s.items is not None:
            for i, item in enumerate(data):
                count += self.validate(s.items, item, f"{path}[{i}]", errs)
        size = len(data)
        if s.min_items is not None and size < s.min_items:
            message = f"{_named(path)} should have at least {s.min_items} items"
            errs.append(_Error(_OTHER, path, message, size))
        if s.max_items is not None and size > s.max_items:
            message = f"{_named(path)} should have at most {s.max_items} items"
            errs.append(_Error(_MAX_ITEMS, path, message, size, valid=s.max_items))
        if s.unique_items and _has_duplicates(data):
            errs.append(_Error(_OTHER, path, f"{_named(path)} shouldn't contain duplicates"))
        return count

    @staticmethod
    def _enum(s: Schema, data: Any, path: str, errs: list[_Error]) -> None:
        """basicCommonValidator: the value must equal one of ``enum``."""
        if s.enum is None or any(_json_equal(data, e) for e in s.enum):
            return
        message = f"{_named(path)} should be one of {s.enum!r}"
        errs.append(_Error(_ENUM, path, message, data, values=tuple(s.enum)))

    def _object(self, s: Schema, data: dict[str, Any], path: str, errs: list[_Error]) -> int:
        """objectValidator: property counts, additional properties, properties, then required."""
        count = 0
        size = len(data)
        if s.min_properties is not None and size < s.min_properties:
            message = f"{_named(path)} should have at least {s.min_properties} properties"
            errs.append(_Error(_OTHER, path, message, size))
            return count
        if s.max_properties is not None and size > s.max_properties:
            message = f"{_named(path)} should have at most {s.max_properties} properties"
            errs.append(_Error(_TOO_MANY_PROPERTIES, path, message, size, valid=s.max_properties))
            return count
        props = s.properties
        if s.additional_properties_allowed is False:
            for key in data:
                if key not in props:
                    message = f"{path}.{key} in {_IN} is a forbidden property"
                    errs.append(_Error(_OTHER, path, message, key))
        elif s.additional_properties is not None:
            for key, value in data.items():
                if key not in props:
                    count += self.validate(s.additional_properties, value, f"{path}.{key}", errs)
        if props:
            # Go visits properties in random map order; this visits them in the object's order.
            prefix = f"{path}." if path else ""
            for name, value in data.items():
                prop = props.get(name)
                if prop is not None:
                    count += self.validate(prop, value, prefix + name, errs)
        for name in s.required:
            if name not in data:
                child = f"{path}.{name}"
                errs.append(_Error(_REQUIRED, child, f"{_named(child)} is required"))
        return count


def _composite(message: str) -> _Error:
    return _Error(_COMPOSITE, "", message)


def _not_multiple(path: str, factor: int | float, data: int | float) -> _Error:
    message = f"{_named(path)} should be a multiple of {go_value(factor)}"
    return _Error(_OTHER, path, message, data)


def _has_duplicates(items: list[Any]) -> bool:
    seen: list[Any] = []
    for item in items:
        if any(_deep_equal(item, other) for other in seen):
            return True
        seen.append(item)
    return False


def deep_equal(a: Any, b: Any) -> bool:
    """reflect.DeepEqual on decoded JSON: int64 1 and float64 1.0 differ, as do true and 1."""
    return bool(a == b) and _deep_equal(a, b)  # Python's == first: fast, and only too lenient


def _deep_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_deep_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _to_cause(err: _Error) -> Cause:
    """apiextensions-apiserver's kubeOpenAPIResultToFieldErrors for one error."""
    if err.code == _COMPOSITE:
        return causes.invalid(causes.NIL_FIELD, "", err.message)
    name = err.name
    field = name.removeprefix(".") if name and name != "." else causes.NIL_FIELD
    if err.code == _REQUIRED:
        return causes.required(field)
    if err.code == _ENUM:
        allowed = [v if isinstance(v, str) else go_json(v) for v in err.values]
        return causes.not_supported(field, err.value, allowed)
    if err.code == _TOO_LONG:
        return causes.too_long(field, err.valid if isinstance(err.valid, int) else -1)
    if err.code in (_MAX_ITEMS, _TOO_MANY_PROPERTIES):
        actual = err.value if isinstance(err.value, int) else -1
        return causes.too_many(field, actual, err.valid if isinstance(err.valid, int) else -1)
    value = "" if err.value is None else err.value
    if err.code == _INVALID_TYPE:
        return causes.type_invalid(field, value, err.message)
    return causes.invalid(field, value, err.message)


_VALIDATOR: Final = _Validator()


def _passes(schema: Schema, value: Any) -> bool:
    """The full walk of one node finds no error in ``value``."""
    errs: list[_Error] = []
    _VALIDATOR.validate(schema, value, "", errs)
    return not errs


def validate_values(obj: Any, schema: Schema) -> list[Cause]:
    """The causes kube-openapi schema validation reports for ``obj``, without duplicates."""
    if accepts(schema, _passes)(
        obj
    ):  # the common case, answered without the walk's paths and counts
        return []
    errs: list[_Error] = []
    _VALIDATOR.validate(schema, obj, "", errs)
    if not errs:
        return []
    # validate.Result.AddErrors drops errors whose message was already reported.
    seen: set[str] = set()
    result: list[Cause] = []
    for err in errs:
        if err.message in seen:
            continue
        seen.add(err.message)
        result.append(_to_cause(err))
    return result
