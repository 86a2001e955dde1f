"""A custom resource's ``x-kubernetes-validations``: its CEL rules, evaluated as kube-apiserver evaluates them
(k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go).

Every rule of a schema node is evaluated with ``self`` bound to the object's value at that node, typed by the
schema (``number`` values are doubles, property names are escaped as kube's ``cel.Escape`` does:
``namespace`` is ``__namespace__``, ``a-b`` is ``a__dash__b``). A rule that refers to ``oldSelf`` is a
transition rule: it runs only on an update, and only where the old object has a non-null value at the same
place (object properties and map keys correlate, and the items of a ``x-kubernetes-list-type: map`` list by
their keys; other list items do not), unless it sets ``optionalOldSelf``. A failure is reported at the node
(plus the rule's normalised ``fieldPath``) with the rule's ``reason`` (FieldValueInvalid by default) and its
``messageExpression``, ``message`` or "failed rule: <rule>"; an evaluation error is reported at the node, as
kube words it. On an update, failures of rules without ``oldSelf`` at a value the update did not change are
not reported (validation ratcheting, on by default since Kubernetes 1.30; values compare as
``reflect.DeepEqual``, and the items of atomic and set lists, which do not correlate, ratchet with their
list); kube returns them as warnings, and so does this. A message expression sees ``oldSelf`` only at a
node where a transition rule declares it. Rules do
not run at all when the schema validation already found a blocking error; one fieldless cause says so.

The evaluator is cel-rust (the ``common-expression-language`` package) with the Kubernetes libraries of
:mod:`apiserver.schema.cellibs` (strings, lists, sets, regex, url, ip, cidr, quantity, semver, format) and
two-variable comprehensions and optional selection (``self.?x``, ``m[?k]``; rewritten for the evaluator,
:mod:`apiserver.schema.celmacros`). A function kube does not enable is not provided either, and a rule that
calls one is refused when written, as kube refuses it (:mod:`apiserver.schema.celrefs`). Not provided:
optional list and map entries (``[?x]``), which the evaluator's parser refuses, and typed
``format: date-time``/``duration`` values (they stay strings). Cost limits are kube's: the rules of one object share its runtime budget and each evaluation
has a limit (:mod:`apiserver.schema.celbudget`, which bounds each evaluation before it runs).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from apiserver.schema import causes
from apiserver.schema.causes import Cause
from apiserver.schema.celbudget import Budget, Metered, meter
from apiserver.schema.celcost import DeclType, decl_type
from apiserver.schema.celerrors import error_text
from apiserver.schema.cellibs import LIBRARIES, ROOTS
from apiserver.schema.celmacros import rewrite
from apiserver.schema.celnames import escape
from apiserver.schema.celrefs import STANDARD, undeclared
from apiserver.schema.celruntime import evaluator
from apiserver.schema.openapi import deep_equal
from apiserver.schema.ratchet import index_map_list, map_list_key
from apiserver.schema.structural import Schema, compile_schema

__all__ = [
    "RuleSyntaxError",
    "compile_failure",
    "compile_rule",
    "unsupported_functions",
    "validate_rules",
]

BLOCKING: Final = frozenset(
    {causes.NOT_SUPPORTED, causes.REQUIRED, causes.TOO_LONG, causes.TOO_MANY, causes.TYPE_INVALID}
)
"""Cause reasons after which kube does not evaluate the rules (hasBlockingErr)."""
NOT_CHECKED: Final = (
    "some validation rules were not checked because the object was invalid; correct the existing"
    " errors to complete validation"
)
MAX_MESSAGE_LENGTH: Final = 5120
"""A messageExpression result longer than this falls back to the message, as in kube."""
_REASONS: Final = {
    "FieldValueForbidden": causes.forbidden,
    "FieldValueRequired": causes.required,
}


class RuleSyntaxError(ValueError):
    """A rule that does not compile (the message is the CEL parser's)."""


def compile_rule(text: str) -> Any:
    """The compiled program of a rule, message or admission expression; raises RuleSyntaxError with the
    parser's message about ``text`` itself (two-variable comprehensions and optional selections are
    rewritten first, :mod:`apiserver.schema.celmacros`)."""
    rewritten = rewrite(text)
    try:
        return evaluator().compile(rewritten)
    except ValueError as error:
        failure = error
    if rewritten != text:
        try:  # the parser's words about the rule as written
            evaluator().compile(text)
        except ValueError as error:
            failure = error
    raise RuleSyntaxError(str(failure)) from None


RULE_VARIABLES: Final = ("self", "oldSelf")
"""What a rule's environment declares (kube declares oldSelf for every rule; using it makes a transition
rule)."""


def compile_failure(source: str) -> str | None:
    """Why a rule or message expression does not compile as kube compiles it (None: it does): the parser's
    message, or cel-go's report of the names it uses that kube does not declare."""
    try:
        compile_rule(source)
    except RuleSyntaxError as error:
        return str(error)
    return undeclared(source, RULE_VARIABLES, LIBRARIES)


def unsupported_functions(program: Any) -> list[str]:
    """The functions a compiled rule calls that the evaluator does not have (operators are fine)."""
    return sorted(
        name
        for name in program.functions()
        if name[:1].isalpha() and name not in STANDARD and name not in LIBRARIES
    )


# -- rules -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    source: str
    program: Any
    message: str
    message_expression: Any
    reason: str
    field_path: tuple[str, ...]
    transition: bool
    optional_old_self: bool
    message_reads_old_self: bool
    metered: Metered
    message_source: str
    message_metered: Metered | None
    functions: frozenset[str]
    """The library functions the rule and its message expression call (only those are registered)."""


_FIELD_PATH_STEP: Final = re.compile(r"\.([^.\[\]]+)|\['((?:[^'\\]|\\.)*)'\]")


def _parse_field_path(text: str) -> tuple[str, ...]:
    """kube's ValidFieldPath syntax: ``.name`` and ``['any.name']`` steps."""
    return tuple(
        dotted or quoted.replace("\\'", "'").replace("\\\\", "\\")
        for dotted, quoted in _FIELD_PATH_STEP.findall(text.strip())
    )


def _rules(s: Schema, root: bool) -> tuple[Rule, ...]:
    """The node's compiled rules (``root``: the node is the object's root, typed with its metadata)."""
    if s.cel_rules is None:
        self_type = decl_type(s, root or s.embedded_resource)
        s.cel_rules = tuple(
            _compile(raw, self_type) for raw in s.raw.get("x-kubernetes-validations") or ()
        )
    rules: tuple[Rule, ...] = s.cel_rules
    return rules


def _compile(raw: Any, self_type: DeclType | None) -> Rule:
    source = str(raw.get("rule", "")).strip()
    expression = str(raw.get("messageExpression") or "").strip()
    program = compile_rule(source)
    message_program = compile_rule(expression) if expression else None
    optional = raw.get("optionalOldSelf") is True
    return Rule(
        source,
        program,
        str(raw.get("message") or "").strip(),
        message_program,
        str(raw.get("reason") or causes.INVALID),
        _parse_field_path(str(raw.get("fieldPath") or "")),
        "oldSelf" in program.variables(),
        optional,
        message_program is not None and "oldSelf" in message_program.variables(),
        meter(source, self_type, optional),
        expression,
        meter(expression, self_type, False) if expression else None,
        frozenset(
            name
            for p in (program, message_program)
            if p is not None
            for name in p.functions()
            if name in LIBRARIES
        ),
    )


# -- values as CEL sees them ---------------------------------------------------------------------------


def _needs_retyping(s: Schema) -> bool:
    """Whether values under ``s`` differ from their JSON as CEL sees them (doubles, escaped names);
    kept on the node, like its compiled rules."""
    if s.cel_retyping is None:
        children = [*s.properties.values(), s.additional_properties, s.items]
        s.cel_retyping = (
            s.types == ("number",)
            or any(escape(name) != name for name in s.properties)
            or any(c is not None and _needs_retyping(c) for c in children)
        )
    return s.cel_retyping


def _cel_value(s: Schema | None, value: Any) -> Any:
    if s is None or not _needs_retyping(s):
        return value
    if isinstance(value, dict):
        if s.properties:
            typed = {}
            for key, item in value.items():
                name = escape(key)
                if name is not None:
                    typed[name] = _cel_value(s.properties.get(key), item)
            return typed
        return {key: _cel_value(s.additional_properties, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cel_value(s.items, item) for item in value]
    if s.types == ("number",) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# -- the walk ------------------------------------------------------------------------------------------

_ABSENT: Final = object()
"""No correlated old value (a create, a place the old object does not have, or a null there)."""


def validate_rules(
    obj: Any, old: Any, schema: Any, prior: list[Cause], warnings: list[str] | None = None
) -> list[Cause]:
    """The causes of ``obj``'s failing rules (``old``: the stored object on an update, else None);
    ``prior`` are the causes validation found so far, which may stop the rules from running. The
    failures ratcheting lets through go to ``warnings``, as kube returns them (``warning.AddWarning``
    with the error's text)."""
    compiled = compile_schema(schema)
    if not (compiled.has_rules or compiled.has_rules_below):
        return []
    if any(cause.reason in BLOCKING for cause in prior):
        return [causes.invalid(causes.NIL_FIELD, None, NOT_CHECKED)]
    errs: list[Cause] = []
    sink = [] if warnings is None else warnings
    _walk(compiled, obj, _ABSENT if old is None else old, False, "", (errs, sink, Budget()))
    return errs


Found = tuple[list[Cause], list[str], Budget]
"""The errors and the warnings (ratcheted errors, as text) a walk finds, and the cost budget it spends
(kube's RuntimeCELCostBudget, shared by every rule of the object)."""


def _walk(s: Schema, value: Any, old: Any, unchanged: bool, path: str, found: Found) -> None:
    """``old``: the correlated old value (oldSelf); ``unchanged``: the update left this value as it was
    (ratcheting, which also reaches list items that do not correlate)."""
    if value is None or found[2].exhausted:
        return
    if old is None:
        old = _ABSENT
    if old is not _ABSENT:
        unchanged = deep_equal(old, value)
    if s.has_rules:
        for cause, ratcheted in _failures(s, value, old, unchanged, path, found[2]):
            if ratcheted:
                found[1].append(str(cause))
            else:
                found[0].append(cause)
    if not s.has_rules_below:
        return
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        for key, child in value.items():
            sub = s.field_schema(key)
            if sub is not None and (sub.has_rules or sub.has_rules_below):
                where = _child(path, key) if key in s.properties else f"{path}[{key}]"
                _walk(sub, child, old_map.get(key, _ABSENT), False, where, found)
                if found[2].exhausted:
                    return
    elif isinstance(value, list) and s.items is not None:
        for index, (item, before, same) in enumerate(_item_pairs(s, value, old, unchanged)):
            _walk(s.items, item, before, same, f"{path}[{index}]", found)
            if found[2].exhausted:
                return


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _item_pairs(
    s: Schema, items: list[Any], old: Any, unchanged: bool
) -> Iterator[tuple[Any, Any, bool]]:
    """Each item with its old item and whether ratcheting covers it: a map list's items correlate by
    their keys; other lists' items do not, so only the list (the nearest correlated node) ratchets them
    (kube's ratchetingOptions.nearestParentCorrelation)."""
    if s.list_type == "map" and s.list_map_keys and isinstance(old, list):
        keys = s.list_map_keys
        by_key = index_map_list(old, keys)
        for item in items:
            key = map_list_key(item, keys)
            yield item, _ABSENT if key is None else by_key.get(key, _ABSENT), False
    else:
        for item in items:
            yield item, _ABSENT, unchanged


def _failures(
    s: Schema, value: Any, old: Any, unchanged: bool, path: str, budget: Budget
) -> Iterator[tuple[Cause, bool]]:
    """Each failure, and whether ratcheting lets it through (a rule without oldSelf, an unchanged value).
    Each evaluation is first charged to ``budget``; one it cannot pay for is not run, and ends validation
    with kube's error at the node."""
    # self and oldSelf go into the context once per node (converting a value to CEL is the dearest
    # part of an evaluation), and only when a rule runs; oldSelf is re-bound when a rule needs it in
    # the other form (optional or plain)
    context: Any = None
    bound_old = ""
    rules = _rules(s, not path)
    where, shown_type = path or causes.NIL_FIELD, _type_name(s)
    refused = budget.enter()
    if refused is not None:
        yield causes.invalid(where, shown_type, refused), False
        return
    old_value = None if old is _ABSENT else old
    # kube declares oldSelf for a node's evaluations only when one of its rules is a transition rule
    # and there is an old value: a message expression reading it otherwise fails, so its message is used
    old_self_declared = old is not _ABSENT and any(r.transition for r in rules)
    for rule in rules:
        if rule.transition and old is _ABSENT and not rule.optional_old_self:
            continue
        refused = budget.spend_rule(
            rule.metered.cost(value, old_value), rule.message or rule.source
        )
        if refused is not None:
            yield causes.invalid(where, shown_type, refused), False
            return
        try:
            if context is None:
                functions = frozenset().union(*(r.functions for r in rules))
                context = _context(functions, {"self": _cel_value(s, value)})
            wanted = "optional" if rule.optional_old_self else "plain" if rule.transition else ""
            if wanted and wanted != bound_old:
                _bind_old_self(context, s, old, optional=wanted == "optional")
                bound_old = wanted
            passed = rule.program.execute(context)
        except Exception as error:  # every evaluation error is the rule's, reported at the node
            failure = _evaluation_error(error, rule)
            yield causes.invalid(where, shown_type, failure), False
            continue
        if passed is True:
            continue
        message_works = old_self_declared or not rule.message_reads_old_self
        if rule.message_reads_old_self and old_self_declared and bound_old != "plain":
            # the message sees oldSelf plain, also under optionalOldSelf (and never another node's)
            _bind_old_self(context, s, old, optional=False)
            bound_old = "plain"
        if rule.message_metered is not None and message_works:
            cost = rule.message_metered.cost(value, old_value)
            refused = budget.spend_message(cost, rule.message_source)
            if refused is not None:
                yield causes.invalid(where, shown_type, refused), False
                return
        cause = _failure(s, rule, path, value, context if message_works else None)
        yield cause, unchanged and not rule.transition


def _bind_old_self(context: Any, s: Schema, old: Any, *, optional: bool) -> None:
    plain = None if old is _ABSENT else _cel_value(s, old)
    if optional:
        value = evaluator().OptionalValue
        context.add_variable("oldSelf", value.none() if old is _ABSENT else value.of(plain))
    else:
        context.add_variable("oldSelf", plain)


_PER_THREAD = threading.local()


def _context(functions: frozenset[str], variables: dict[str, Any]) -> Any:
    """A context with ``functions`` (of the libraries) and ``variables``: one per thread and set of
    functions, made once (registering a function costs more than an evaluation), its variables replaced;
    a rule reads only the variables it names. Only the functions the node's rules call: cel-rust registers
    every function of a context again on the first evaluation after a variable changes (~0.1 µs each,
    ~6.5 µs with all the libraries', per node of every write)."""
    contexts: dict[frozenset[str], Any] | None = getattr(_PER_THREAD, "contexts", None)
    if contexts is None:
        contexts = _PER_THREAD.contexts = {}
    context = contexts.get(functions)
    if context is None:
        context = contexts[functions] = evaluator().Context()
        for name in functions:
            context.add_function(name, LIBRARIES[name])
        for name, root in ROOTS.items():
            context.add_variable(name, root)
    for name, content in variables.items():
        context.add_variable(name, content)
    return context


def _failure(s: Schema, rule: Rule, path: str, value: Any, context: Any) -> Cause:
    """``context``: None when the message expression cannot be evaluated (it reads an undeclared
    oldSelf), so the message is used."""
    field = _field(s, path, rule.field_path) or causes.NIL_FIELD
    detail = rule.message or f"failed rule: {rule.source}"  # ruleMessageOrDefault
    if rule.message_expression is not None and context is not None:
        try:
            evaluated = rule.message_expression.execute(context)
        except Exception:  # kube falls back to the message when the expression fails
            evaluated = None
        if isinstance(evaluated, str):
            evaluated = evaluated.strip()
            if evaluated and "\n" not in evaluated and len(evaluated) <= MAX_MESSAGE_LENGTH:
                detail = evaluated
    shown = causes.OMIT if isinstance(value, dict | list) else value  # no structured values
    make = _REASONS.get(rule.reason)
    if make is not None:
        return make(field, detail)
    if rule.reason == causes.DUPLICATE:
        return causes.duplicate(field, shown)
    return causes.invalid(field, shown, detail)


def _field(s: Schema, path: str, steps: tuple[str, ...]) -> str:
    """The node's path with a rule's fieldPath: properties as children, map keys as ``[key]``."""
    node: Schema | None = s
    for step in steps:
        if node is not None and step not in node.properties and node.additional_properties:
            path, node = f"{path}[{step}]", node.additional_properties
        else:
            path, node = _child(path, step), node.properties.get(step) if node else None
    return path


def _type_name(s: Schema) -> str:
    """The value kube shows for an evaluation error: the schema's type (empty when it has none)."""
    return s.types[0] if len(s.types) == 1 else ""


def _evaluation_error(error: Exception, rule: Rule) -> str:
    what = rule.message or rule.source  # ruleErrorString
    text = error_text(error)
    if isinstance(
        error, TypeError
    ):  # cel-rust's operand type mismatches: cel-go's "no such overload"
        return (
            "'no such overload': call arguments did not match a supported operator, function or"
            f" macro signature for rule: {what}"
        )
    if isinstance(error, KeyError):
        text = f"no such key: {error.args[0] if error.args else ''}"
    elif isinstance(error, OverflowError):
        text = "integer overflow"
    elif isinstance(error, ZeroDivisionError):
        text = "division by zero"
    return f"{text} evaluating rule: {what}"
