"""The runtime CEL cost budget of one validation, as kube keeps it
(apiextensions-apiserver pkg/apiserver/schema/cel/validation.go): all the rules of one object share
``RuntimeCELCostBudget`` and each evaluation may cost at most ``PerCallLimit``.

kube meters the evaluation as it runs; the engine here (cel-rust) cannot. So each evaluation's cost is
bounded *before* it runs: the static estimator (:mod:`apiserver.schema.celcost`) with the actual sizes of
the strings, lists and maps of the object at the paths the rule reaches, instead of the schema's bounds.
That bound is what is charged, and an evaluation whose bound is over the limit or the rest of the budget
does not run: a rule can never spend more than the budget allows, whatever the object. The bound is an
over-estimate where an evaluation stops early (``all`` at its first false, ``&&``...), so an object kube
would accept just under the budget may be refused here; docs/performance.md measures the bound against the
time evaluations take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from apiserver.schema.celcost import (
    MAX_REQUEST_SIZE,
    PER_CALL_LIMIT,
    RUNTIME_BUDGET,
    DeclaredSizes,
    DeclType,
    Range,
    estimate,
    walk,
)
from apiserver.schema.celparse import CelParseError, Expr, parse

__all__ = [
    "OUT_OF_BUDGET",
    "Budget",
    "Metered",
    "ValueSizes",
    "meter",
]

OUT_OF_BUDGET: Final = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)
MESSAGE_OUT_OF_BUDGET: Final = (
    "messageExpression evaluation failed due to running out of cost budget, no further validation rules"
    " will be run"
)


def _per_call(rule: str) -> str:
    return (
        "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due"
        f" to call cost exceeds limit for rule: {rule}"
    )


def _message_per_call(source: str) -> str:
    return (
        "no further validation rules will be run due to call cost exceeds limit for messageExpression:"
        f' "{source}"'
    )


@dataclass(frozen=True, slots=True)
class Metered:
    """An expression with what the budget needs: its AST, the type of ``self`` where it runs, and its cost
    when that does not depend on sizes (``constant``: then no sizes are measured)."""

    ast: Expr | None
    self_type: DeclType
    optional_old_self: bool
    constant: int | None

    def cost(self, value: Any, old: Any) -> int:
        """The bound of one evaluation with ``self`` = ``value`` and ``oldSelf`` = ``old`` (None: absent)."""
        if self.constant is not None:
            return self.constant
        if self.ast is None:
            return PER_CALL_LIMIT + 1  # unknown: never run (generation refuses such rules)
        sizes = ValueSizes(self.self_type, value, old)
        return estimate(
            self.ast,
            self.self_type,
            sizes,
            optional_old_self=self.optional_old_self,
            engine=True,
        ).max


class _NoSizes:
    """Every path the type has is empty: with it, an estimate that equals the declared one does not
    depend on sizes (every cost formula grows with sizes)."""

    def __init__(self, root: DeclType) -> None:
        self.root = root

    def size(self, path: tuple[str, ...]) -> Range | None:
        return None if walk(self.root, path) is None else Range(0, 0)


UNTYPED: Final = DeclType("dyn", MAX_REQUEST_SIZE - 2, 1)
"""``self`` where the schema gives no type (kube refuses rules there; they are evaluated here)."""


def meter(source: str, self_type: DeclType | None, optional_old_self: bool) -> Metered:
    """What the budget needs of an expression at a node whose values have ``self_type``."""
    try:
        ast: Expr | None = parse(source)
    except CelParseError:
        ast = None
    typed = self_type or UNTYPED
    if ast is None:
        return Metered(None, typed, optional_old_self, None)
    options = {"optional_old_self": optional_old_self, "engine": True}
    declared = estimate(ast, typed, DeclaredSizes(typed), **options).max
    empty = estimate(ast, typed, _NoSizes(typed), **options).max
    return Metered(ast, typed, optional_old_self, declared if declared == empty else None)


class ValueSizes:
    """The sizes of an actual value at each path: the largest string, list or map found there (scalars
    count 0, as their declared size does), measured once per path."""

    def __init__(self, root: DeclType, value: Any, old: Any) -> None:
        self.root = root
        self.value = value
        self.old = old
        self.memo: dict[tuple[str, ...], Range | None] = {}

    def size(self, path: tuple[str, ...]) -> Range | None:
        if path in self.memo:
            return self.memo[path]
        found = self._measure(path)
        self.memo[path] = found
        return found

    def _measure(self, path: tuple[str, ...]) -> Range | None:
        if walk(self.root, path) is None:
            return None
        node = self.root
        values = [self.old if path[0] == "oldSelf" and self.old is not None else self.value]
        for step in path[1:]:
            values, node = _step(values, node, step)
        return Range(0, max((_size(v) for v in values), default=0))


def _step(values: list[Any], node: DeclType, step: str) -> tuple[list[Any], DeclType]:
    """The values one step further, and their type (the step is known to exist in ``node``)."""
    if step == "@items":
        return [item for v in values if isinstance(v, list) for item in v], node.elem or node
    if step == "@values":
        return [
            item for v in values if isinstance(v, dict) for item in v.values()
        ], node.elem or node
    if step == "@keys":
        return [key for v in values if isinstance(v, dict) for key in v], node.key or node
    name, child = node.fields[step]
    return [v[name] for v in values if isinstance(v, dict) and name in v], child


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | list | dict) else 0


@dataclass(slots=True)
class Budget:
    """What is left of one validation's budget; negative once validation must stop."""

    remaining: int = RUNTIME_BUDGET

    @property
    def exhausted(self) -> bool:
        return self.remaining < 0

    def enter(self) -> str | None:
        """At a node with rules: kube refuses to start with nothing left."""
        if self.remaining <= 0:
            self.remaining = -1
            return OUT_OF_BUDGET
        return None

    def spend_rule(self, cost: int, rule: str) -> str | None:
        """Charge a rule's evaluation, or say why it does not run (then validation stops)."""
        return self._spend(cost, OUT_OF_BUDGET, _per_call(rule))

    def spend_message(self, cost: int, source: str) -> str | None:
        """Charge a message expression's evaluation, or say why it does not run (validation stops)."""
        return self._spend(cost, MESSAGE_OUT_OF_BUDGET, _message_per_call(source))

    def _spend(self, cost: int, out_of_budget: str, over_limit: str) -> str | None:
        # an evaluation over the limit is cancelled just past it: that much is spent first
        spent = min(cost, PER_CALL_LIMIT + 1)
        if spent > self.remaining:
            self.remaining = -1
            return out_of_budget
        if cost > PER_CALL_LIMIT:
            self.remaining = -1
            return over_limit
        self.remaining -= spent
        return None
