"""A ValidatingAdmissionPolicy's expressions compiled once per version of the policy (its validations,
message expressions, variables, match conditions and audit annotations), and what evaluating them against
one write gives (kube's validating.Validator: a decision per validation), within kube's runtime cost budget
(cost.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import orjson

from apiserver.schema.cel import MAX_MESSAGE_LENGTH
from apiserver.schema.celerrors import error_text
from builtin.admissionregistration.celenv import admission_context, called, compile_expression
from builtin.admissionregistration.cost import (
    HEAVY_COST,
    Budget,
    Cost,
    OutOfBudget,
    cost_of,
    safe_size,
    total,
)
from builtin.admissionregistration.projection import Fields, needed_fields, project


class EvaluationError(Exception):
    """An expression failed to evaluate (kube: "expression '<e>' resulted in error: <error>")."""


@dataclass(slots=True)
class Bound:
    """One evaluation of a policy: the CEL context, the values bound in it (whose sizes bound the cost of
    each expression) and what is left of the budget."""

    context: Any
    values: dict[str, Any]
    budget: Budget


@dataclass(frozen=True, slots=True)
class Expression:
    source: str
    program: Any
    cost: Cost

    def evaluate(self, bound: Bound) -> Any:
        """The result; raises EvaluationError, or OutOfBudget (then nothing else is evaluated)."""
        if not bound.budget.charge(self.cost.bound(bound.values)):
            # kube: cel.CostLimit(PerCallLimit) cancels the evaluation with this error
            raise EvaluationError(
                f"expression '{self.source}' resulted in error: operation cancelled: actual cost "
                "limit exceeded"
            )
        try:
            return self.program.execute(bound.context)
        except Exception as error:  # cel-rust raises several kinds; each is this expression's error
            raise EvaluationError(
                f"expression '{self.source}' resulted in error: {_error_text(error)}"
            ) from None


def _error_text(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"no such key: {error.args[0] if error.args else ''}"
    if isinstance(error, TypeError):
        return "no such overload"
    return error_text(error)


@dataclass(frozen=True, slots=True)
class Validation:
    index: int
    expression: Expression
    message: str
    reason: str
    message_expression: Expression | None


@dataclass(frozen=True, slots=True)
class Failure:
    """One validation that did not hold (or could not be evaluated, under failurePolicy Fail)."""

    index: int
    message: str
    reason: str
    errored: bool = False
    """The expression could not be evaluated (a failure only under failurePolicy Fail)."""


def _expression(source: Any) -> Expression:
    text = str(source or "")
    return Expression(text, compile_expression(text), cost_of(text))


@dataclass(frozen=True, slots=True)
class Decision:
    """One evaluation of a policy: the validations that failed and the audit annotations, or the error of
    a match condition (then nothing else ran)."""

    failures: tuple[Failure, ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()
    condition_error: str | None = None


MEMO_SIZE = 1024
"""Decisions remembered per compiled policy (then it starts over)."""
MEMO_KEY_BYTES = 1024
"""Inputs whose JSON is longer are evaluated every time: a policy reading a whole object (or a large part
of it) would otherwise keep up to MEMO_SIZE request bodies in memory, and such inputs rarely repeat."""


@dataclass(frozen=True, slots=True)
class CompiledPolicy:
    name: str
    spec: dict[str, Any]
    validations: tuple[Validation, ...]
    variables: tuple[tuple[str, Expression], ...]
    conditions: tuple[tuple[str, Expression], ...]
    annotations: tuple[tuple[str, Expression], ...]
    needed: dict[str, Fields | bool]
    """What of each admission variable the expressions read (projection.py); the others are null."""
    functions: frozenset[str] = frozenset()
    """The library functions the expressions call (celenv: only those are registered)."""
    costs: tuple[Cost, ...] = ()
    """The costs of every expression."""
    safe_size: int = -1
    """Inputs whose JSON is no longer cannot cost more than HEAVY_COST (cost.safe_size)."""
    decisions: dict[bytes, Decision] = dataclasses.field(default_factory=dict)
    """By the JSON of the projected admission variables: CEL is deterministic, so the same inputs decide
    the same (a policy reading ``authorizer``, whose answers may change, is never remembered). The fields
    policies read (replicas, an image, a label) take few values, so most writes are decided here."""

    def key(self, projected: dict[str, Any]) -> bytes | None:
        """What remembers the decision on ``projected`` (None: it is not remembered)."""
        if "authorizer" in self.needed:
            return None
        try:
            key = orjson.dumps(projected)
        except TypeError:  # not JSON (an integer over 64 bits): evaluated every time
            return None
        return key if len(key) <= MEMO_KEY_BYTES else None

    def decide(self, projected: dict[str, Any], key: bytes | None) -> Decision:
        """The decision on ``projected`` (the admission variables, CompiledPolicy.project and
        with_params), remembered by ``key``. Each evaluation has its own budget (kube's ForInput per
        param); running out of it is an errored failure."""
        known = self.decisions.get(key) if key is not None else None
        if known is not None:
            return known
        decision = self._evaluate(projected)
        if key is not None:
            if len(self.decisions) >= MEMO_SIZE:
                self.decisions.clear()
            self.decisions[key] = decision
        return decision

    def _evaluate(self, projected: dict[str, Any]) -> Decision:
        try:
            context = self.bind(projected)
            try:
                if not self.matches(context):
                    return Decision()
            except EvaluationError as error:
                return Decision(condition_error=str(error))
            failures = self.failures(context)
            return Decision(tuple(failures), tuple(self.audit_annotations(context).items()))
        except OutOfBudget as error:
            return Decision((Failure(0, str(error), "", errored=True),))

    def project(self, variables: dict[str, Any]) -> dict[str, Any]:
        """The admission variables the expressions read, cut down to the fields they select."""
        return {name: project(variables.get(name), f) for name, f in self.needed.items()}

    def with_params(self, projected: dict[str, Any], params: Any) -> dict[str, Any]:
        """``projected`` with ``params`` (projected) in place of its params, when the expressions read
        them."""
        fields = self.needed.get("params")
        return projected if fields is None else {**projected, "params": project(params, fields)}

    def bind(self, projected: dict[str, Any]) -> Bound:
        """The evaluation context with the (projected) admission variables and the policy's
        ``variables``, evaluated in order, each seeing those before it (the first none); one that fails is
        left out, so only expressions reading it fail. ``variables`` is bound even when empty: the
        thread's context may hold an earlier evaluation's. Raises OutOfBudget."""
        slot = admission_context(self.functions, projected)
        values: dict[str, Any] = {}
        evaluation = Bound(slot.context, {**projected, "variables": values}, Budget())
        for index, (name, expression) in enumerate(self.variables):
            if index or "variables" in expression.source:  # the first reads none (or an empty map)
                slot.bind("variables", values)
            try:
                values[name] = expression.evaluate(evaluation)
            except EvaluationError:
                continue
        slot.bind("variables", values)
        return evaluation

    def expressions(self) -> list[Expression]:
        """Every expression of the policy."""
        found = [e for _, e in (*self.variables, *self.conditions, *self.annotations)]
        for v in self.validations:
            found.append(v.expression)
            if v.message_expression is not None:
                found.append(v.message_expression)
        return found

    def bound(self, projected: dict[str, Any]) -> int:
        """A bound of what evaluating the whole policy once costs with the (projected) admission
        variables (the policy's variables not counted: their values are not known yet), to decide whether
        to evaluate it off the event loop."""
        return total(self.costs, projected)

    def matches(self, context: Bound) -> bool:
        """All match conditions are true; raises EvaluationError."""
        for name, expression in self.conditions:
            result = expression.evaluate(context)
            if result is not True:
                if result is False:
                    return False
                raise EvaluationError(f"expression '{name}' resulted in error: no such overload")
        return True

    def failures(self, context: Bound) -> list[Failure]:
        """The validations that do not hold; an evaluation error is a failure whose message says so."""
        found = []
        for validation in self.validations:
            try:
                result = validation.expression.evaluate(context)
                if not isinstance(result, bool):
                    raise EvaluationError(
                        f"expression '{validation.expression.source}' resulted in error: "
                        "no such overload"
                    )
            except EvaluationError as error:
                found.append(Failure(validation.index, str(error), "", errored=True))
                continue
            if not result:
                found.append(
                    Failure(validation.index, _message(validation, context), validation.reason)
                )
        return found

    def audit_annotations(self, context: Bound) -> dict[str, str]:
        """``<policy>/<key>`` → the value expression's string (null: no annotation)."""
        found = {}
        for key, expression in self.annotations:
            try:
                value = expression.evaluate(context)
            except EvaluationError:
                continue
            if isinstance(value, str):
                found[f"{self.name}/{key}"] = value
        return found


def _message(validation: Validation, context: Bound) -> str:
    """kube's order: a non-empty single-line messageExpression result, the message, else "failed
    expression: <expression>"."""
    if validation.message_expression is not None:
        try:
            text = validation.message_expression.evaluate(context)
        except (EvaluationError, OutOfBudget):
            text = None
        if isinstance(text, str):
            text = text.strip()
            if text and "\n" not in text and len(text) <= MAX_MESSAGE_LENGTH:
                return text
    return validation.message or f"failed expression: {validation.expression.source}"


def compile_policy(policy: dict[str, Any]) -> CompiledPolicy:
    """Raises ValueError (the CEL parser's message) when an expression does not compile."""
    spec = policy.get("spec") or {}
    sources = [
        str(item.get(key) or "")
        for field, keys in _EXPRESSION_FIELDS
        for item in spec.get(field) or ()
        for key in keys
    ]
    validations = tuple(
        Validation(
            index,
            _expression(v.get("expression")),
            str(v.get("message") or ""),
            str(v.get("reason") or ""),
            _expression(v["messageExpression"]) if v.get("messageExpression") else None,
        )
        for index, v in enumerate(spec.get("validations") or ())
    )
    compiled = CompiledPolicy(
        name=policy["metadata"]["name"],
        spec=spec,
        validations=validations,
        variables=tuple(
            (str(v.get("name")), _expression(v.get("expression")))
            for v in spec.get("variables") or ()
        ),
        conditions=tuple(
            (str(c.get("name")), _expression(c.get("expression")))
            for c in spec.get("matchConditions") or ()
        ),
        annotations=tuple(
            (str(a.get("key")), _expression(a.get("valueExpression")))
            for a in spec.get("auditAnnotations") or ()
        ),
        needed=needed_fields(sources),
    )
    expressions = compiled.expressions()
    costs = tuple(e.cost for e in expressions)
    return dataclasses.replace(
        compiled,
        functions=called(e.program for e in expressions),
        costs=costs,
        safe_size=safe_size(costs, HEAVY_COST),
    )


_EXPRESSION_FIELDS = (
    ("validations", ("expression", "messageExpression")),
    ("variables", ("expression",)),
    ("matchConditions", ("expression",)),
    ("auditAnnotations", ("valueExpression",)),
)
