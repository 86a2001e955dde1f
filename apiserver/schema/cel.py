"""A custom resource's ``x-kubernetes-validations``: its CEL rules, evaluated as kube-apiserver evaluates them
(k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go).

Every rule of a schema node is evaluated with ``self`` bound to the object's value at that node. A rule that
refers to ``oldSelf`` is a transition rule: it runs only on an update, and only where the old object has a
value at the same place (object properties and map keys correlate, and the items of a
``x-kubernetes-list-type: map`` list by their keys; other list items do not), unless it sets
``optionalOldSelf``. A failure is reported at the node (plus the rule's ``fieldPath``) with the rule's
``reason`` (FieldValueInvalid by default) and its ``messageExpression``, ``message`` or "failed rule: <rule>";
an evaluation error is reported as kube words it. On an update, failures at a node whose value the update
did not change are not reported (validation ratcheting, on by default since Kubernetes 1.30). Rules do not
run at all when the schema validation already found a blocking error; one fieldless cause says so.

The evaluator is cel-rust (the ``common-expression-language`` package), with the Kubernetes string
extensions the rules of real CRDs call (``split``, ``lowerAscii``, ``upperAscii``, ``trim``, ``replace``,
``indexOf``, ``lastIndexOf``, ``join``). Not provided: the other Kubernetes libraries (``url``, ``quantity``,
``ip``, ``cidr``, ``format``, ``isSorted``...), optional field selection (``self.?x``), typed
``format: date-time``/``duration`` values (they stay strings), and cost limits; a rule that calls a
function the evaluator lacks fails with an evaluation error naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import cel

from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.structural import Schema, compile_schema

__all__ = ["RuleSyntaxError", "compile_rule", "validate_rules"]

BLOCKING: Final = frozenset(
    {causes.NOT_SUPPORTED, causes.REQUIRED, causes.TOO_LONG, causes.TOO_MANY, causes.TYPE_INVALID}
)
"""Cause reasons after which kube does not evaluate the rules (hasBlockingErr)."""
NOT_CHECKED: Final = (
    "some validation rules were not checked because the object was invalid; correct the existing"
    " errors to complete validation"
)
_REASONS: Final = {
    "FieldValueForbidden": causes.forbidden,
    "FieldValueRequired": causes.required,
}


class RuleSyntaxError(ValueError):
    """A rule that does not compile (the message is the CEL parser's)."""


def compile_rule(text: str) -> Any:
    """The compiled program of a rule or message expression; raises RuleSyntaxError."""
    try:
        return cel.compile(text)
    except ValueError as error:
        raise RuleSyntaxError(str(error)) from None


def _join(items: list[Any], separator: str = "") -> str:
    return separator.join(str(item) for item in items)


def _index_of(text: str, needle: str, start: int = 0) -> int:
    return text.find(needle, start)


def _last_index_of(text: str, needle: str, end: int | None = None) -> int:
    return text.rfind(needle, 0, None if end is None else end + len(needle))


def _replace(text: str, old: str, new: str, count: int = -1) -> str:
    return text.replace(old, new, count)


def _split(text: str, separator: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    if separator == "":
        parts = list(text)
        return parts if limit < 0 else [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    return text.split(separator, limit - 1 if limit > 0 else -1)


EXTENSIONS: Final[dict[str, Callable[..., Any]]] = {
    "indexOf": _index_of,
    "join": _join,
    "lastIndexOf": _last_index_of,
    "lowerAscii": lambda text: text.lower() if text.isascii() else _ascii_case(text, str.lower),
    "replace": _replace,
    "split": _split,
    "trim": str.strip,
    "upperAscii": lambda text: text.upper() if text.isascii() else _ascii_case(text, str.upper),
}
"""The Kubernetes CEL string library (k8s.io/apiserver/pkg/cel/library, cel-go's strings extension)."""


def _ascii_case(text: str, change: Callable[[str], str]) -> str:
    return "".join(change(ch) if ch.isascii() else ch for ch in text)


@dataclass(frozen=True, slots=True)
class Rule:
    source: str
    program: Any
    message: str
    message_expression: Any
    reason: str
    field_path: str
    transition: bool
    optional_old_self: bool


def _rules(s: Schema) -> tuple[Rule, ...]:
    if s.cel_rules is None:
        s.cel_rules = tuple(_compile(raw) for raw in s.raw.get("x-kubernetes-validations") or ())
    rules: tuple[Rule, ...] = s.cel_rules
    return rules


def _compile(raw: Any) -> Rule:
    source = str(raw.get("rule", "")).strip()
    message = str(raw.get("message") or "").strip()
    expression = str(raw.get("messageExpression") or "").strip()
    program = compile_rule(source)
    return Rule(
        source,
        program,
        message,
        compile_rule(expression) if expression else None,
        str(raw.get("reason") or causes.INVALID),
        str(raw.get("fieldPath") or "").lstrip("."),
        "oldSelf" in program.variables(),
        raw.get("optionalOldSelf") is True,
    )


_ABSENT: Final = object()
"""No correlated old value (a create, or a place the old object does not have)."""


def validate_rules(obj: Any, old: Any, schema: Any, prior: list[Cause]) -> list[Cause]:
    """The causes of ``obj``'s failing rules (``old``: the stored object on an update, else None);
    ``prior`` are the causes validation found so far, which may stop the rules from running."""
    compiled = compile_schema(schema)
    if not (compiled.has_rules or compiled.has_rules_below):
        return []
    if any(cause.reason in BLOCKING for cause in prior):
        return [causes.invalid(causes.NIL_FIELD, None, NOT_CHECKED)]
    errs: list[Cause] = []
    _walk(compiled, obj, _ABSENT if old is None else old, "", errs)
    return errs


def _walk(s: Schema, value: Any, old: Any, path: str, errs: list[Cause]) -> None:
    if value is None:
        return
    if s.has_rules:
        found = list(_failures(s, value, old, path))
        if found and not (old is not _ABSENT and old == value):  # ratcheting: unchanged values pass
            errs.extend(found)
    if not s.has_rules_below:
        return
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        for key, child in value.items():
            sub = s.field_schema(key)
            if sub is not None and (sub.has_rules or sub.has_rules_below):
                where = f"{path}.{key}" if key in s.properties else f"{path}[{key}]"
                _walk(sub, child, old_map.get(key, _ABSENT), where.lstrip("."), errs)
    elif isinstance(value, list) and s.items is not None:
        olds = _correlated_items(s, value, old)
        for index, item in enumerate(value):
            _walk(s.items, item, next(olds), f"{path}[{index}]", errs)


def _correlated_items(s: Schema, items: list[Any], old: Any) -> Iterator[Any]:
    """Each item's old item: by the map keys of a ``x-kubernetes-list-type: map`` list, else none."""
    if s.list_type != "map" or not s.list_map_keys or not isinstance(old, list):
        while True:
            yield _ABSENT
    keys = s.list_map_keys
    by_key = {tuple(item.get(k) for k in keys): item for item in old if isinstance(item, dict)}
    for item in items:
        yield (
            by_key.get(tuple(item.get(k) for k in keys), _ABSENT)
            if isinstance(item, dict)
            else _ABSENT
        )


def _failures(s: Schema, value: Any, old: Any, path: str) -> Iterator[Cause]:
    for rule in _rules(s):
        if rule.transition and old is _ABSENT and not rule.optional_old_self:
            continue
        variables = {"self": _cel_value(s, value)}
        if (
            rule.optional_old_self
        ):  # oldSelf is an optional: none on a create or an uncorrelated item
            absent = old is _ABSENT
            none, of = cel.OptionalValue.none, cel.OptionalValue.of
            variables["oldSelf"] = none() if absent else of(_cel_value(s, old))
        elif rule.transition:
            variables["oldSelf"] = _cel_value(s, old)
        context = cel.Context(variables=variables)
        for name, function in EXTENSIONS.items():
            context.add_function(name, function)
        field = ".".join(p for p in (path, rule.field_path) if p) or causes.NIL_FIELD
        try:
            passed = rule.program.execute(context)
        except Exception as error:
            yield causes.invalid(
                field,
                _type_name(s),
                f"{_evaluation_error(error)} evaluating rule: {_error_string(rule)}",
            )
            continue
        if passed is True:
            continue
        yield _failure(rule, field, value, context)


def _failure(rule: Rule, field: str, value: Any, context: Any) -> Cause:
    # ruleMessageOrDefault
    detail, shown = rule.message or f"failed rule: {rule.source}", value
    if rule.message_expression is not None:
        try:
            evaluated = rule.message_expression.execute(context)
        except Exception:
            evaluated = None
        if isinstance(evaluated, str) and evaluated.strip() and "\n" not in evaluated:
            detail, shown = evaluated, causes.OMIT
    make = _REASONS.get(rule.reason)
    if make is not None:
        return make(field, detail)
    if rule.reason == causes.DUPLICATE:
        return causes.duplicate(field, value)
    if isinstance(shown, dict | list):
        shown = causes.OMIT  # kube leaves structured values out of the message
    return causes.invalid(field, shown, detail)


def _cel_value(s: Schema, value: Any) -> Any:
    """JSON numbers of a ``type: number`` node are doubles in CEL, even when they look like integers."""
    if s.types == ("number",) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _type_name(s: Schema) -> str:
    return s.types[0] if len(s.types) == 1 else "object"


def _error_string(rule: Rule) -> str:
    """kube's ruleErrorString: the message, else the rule."""
    return rule.message or rule.source


def _evaluation_error(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"no such key: {error.args[0] if error.args else ''}"
    return str(error)
