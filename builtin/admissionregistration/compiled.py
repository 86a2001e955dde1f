"""A ValidatingAdmissionPolicy's expressions compiled once per version of the policy (its validations,
message expressions, variables, match conditions and audit annotations), and what evaluating them against
one write gives (kube's validating.Validator: a decision per validation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver.schema.cel import MAX_MESSAGE_LENGTH
from builtin.admissionregistration.celenv import admission_context, compile_expression
from builtin.admissionregistration.projection import Fields, needed_fields, project


class EvaluationError(Exception):
    """An expression failed to evaluate (kube: "expression '<e>' resulted in error: <error>")."""


@dataclass(frozen=True, slots=True)
class Expression:
    source: str
    program: Any

    def evaluate(self, context: Any) -> Any:
        try:
            return self.program.execute(context)
        except Exception as error:  # cel-rust raises several kinds; each is this expression's error
            raise EvaluationError(
                f"expression '{self.source}' resulted in error: {_error_text(error)}"
            ) from None


def _error_text(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"no such key: {error.args[0] if error.args else ''}"
    if isinstance(error, TypeError):
        return "no such overload"
    return " ".join(str(error).split())


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
    return Expression(text, compile_expression(text))


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

    def bind(self, variables: dict[str, Any]) -> Any:
        """The evaluation context with the admission variables and the policy's ``variables`` (evaluated in
        order, each seeing those before it; one that fails is left out, so only expressions reading it
        fail)."""
        bound = {name: project(variables.get(name), fields) for name, fields in self.needed.items()}
        values: dict[str, Any] = {}
        if len(self.variables) > 1:  # the first variable can read none (kube's are ordered)
            bound["variables"] = values
        context = admission_context(bound)
        for name, expression in self.variables:
            try:
                values[name] = expression.evaluate(context)
            except EvaluationError:
                continue
            context.add_variable("variables", values)
        return context

    def matches(self, context: Any) -> bool:
        """All match conditions are true; raises EvaluationError."""
        for name, expression in self.conditions:
            result = expression.evaluate(context)
            if result is not True:
                if result is False:
                    return False
                raise EvaluationError(f"expression '{name}' resulted in error: no such overload")
        return True

    def failures(self, context: Any) -> list[Failure]:
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

    def audit_annotations(self, context: Any) -> dict[str, str]:
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


def _message(validation: Validation, context: Any) -> str:
    """kube's order: a non-empty single-line messageExpression result, the message, else "failed
    expression: <expression>"."""
    if validation.message_expression is not None:
        try:
            text = validation.message_expression.evaluate(context)
        except EvaluationError:
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
    return CompiledPolicy(
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


_EXPRESSION_FIELDS = (
    ("validations", ("expression", "messageExpression")),
    ("variables", ("expression",)),
    ("matchConditions", ("expression",)),
    ("auditAnnotations", ("valueExpression",)),
)
