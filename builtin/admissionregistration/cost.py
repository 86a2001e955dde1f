"""The runtime CEL cost budget of admission policy expressions, as kube keeps it for a
ValidatingAdmissionPolicy (k8s.io/apiserver pkg/admission/plugin/cel/filter.go ``ForInput``, with
StrictCostEnforcementForVAP, GA in 1.32): one evaluation of a policy for a write may spend
``celconfig.RuntimeCELCostBudget`` (10,000,000) in all, and each expression at most ``PerCallLimit``
(1,000,000), the program's ``cel.CostLimit``.

kube meters each evaluation as it runs; cel-rust cannot, so, as for schema rules (apiserver.schema.celbudget),
an expression's cost is bounded *before* it runs, by the static estimator (apiserver.schema.celcost) with the
actual sizes of the strings, lists and maps the expression reaches in ``object``, ``params``... An expression
whose bound is over the per-call limit fails as kube's cancelled evaluation does, and one over what is left of
the budget stops the evaluation with kube's "running out of cost budget" error: a policy can never hold the
server for longer than the budget allows, whatever the object."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from apiserver.schema.celbudget import OUT_OF_BUDGET, Fixed
from apiserver.schema.celcost import PER_CALL_LIMIT, RUNTIME_BUDGET, DeclType, Range, estimate
from apiserver.schema.celparse import CelParseError, Expr, parse

__all__ = [
    "HEAVY_COST",
    "OUT_OF_BUDGET",
    "Budget",
    "Cost",
    "OutOfBudget",
    "cost_of",
    "safe_size",
    "total",
]

Path = tuple[str, ...]
DYN: Final = DeclType("dyn")
HEAVY_COST: Final = 10_000
"""A policy evaluation whose cost bound is above this runs off the event loop (registry.offload): the engine
spends ~0.1-0.3 µs per unit of the bound (300 labels compared pairwise: 811,502 units, ~160 ms), so this is
~2 ms, and the hop costs ~50 µs; a whole budget (10,000,000) is seconds. cel-rust holds the GIL while it
evaluates one expression, so off the loop the loop waits for one expression at most (bounded by the per-call
limit), not for the whole policy."""
CACHED: Final = 256
"""Bounds kept per expression, by the sizes they were made with (then the cache starts over)."""


class OutOfBudget(Exception):
    """The evaluation of a policy ran out of its budget: no further expression runs."""

    def __init__(self) -> None:
        super().__init__(OUT_OF_BUDGET)


def measure(values: dict[str, Any], path: Path) -> int:
    """The largest size (code points, items, entries; scalars 0) among the values at ``path`` of the bound
    variables. The expressions' variables are untyped, so a comprehension step is read from the value: a
    list's items, a map's keys (``@keys``) or values."""
    value = values.get(path[0])
    for index in range(1, len(path)):  # plain fields (the common case): no list to gather
        step = path[index]
        if step.startswith("@") or not isinstance(value, dict):
            break
        value = value.get(step)
    else:
        return len(value) if isinstance(value, str | list | dict) else 0
    found: list[Any] = [values[path[0]]] if path[0] in values else []
    for step in path[1:]:
        nxt: list[Any] = []
        for value in found:
            if isinstance(value, list):
                if step.startswith("@"):
                    nxt.extend(value)
            elif isinstance(value, dict):
                if step == "@keys":
                    nxt.extend(value)
                elif step.startswith("@"):
                    nxt.extend(value.values())
                elif step in value:
                    nxt.append(value[step])
        found = nxt
    return max((len(v) for v in found if isinstance(v, str | list | dict)), default=0)


class _Asked:
    """Every path unknown, noting those asked about (the same whatever the sizes)."""

    def __init__(self) -> None:
        self.asked: dict[Path, None] = {}

    def size(self, path: Path) -> Range | None:
        self.asked[path] = None
        return None


@dataclass(frozen=True, slots=True)
class Cost:
    """What bounds an expression's cost: its AST (None when the estimator's parser cannot read it: then it
    never runs), the variable paths whose sizes the bound depends on, and the bounds made so far."""

    ast: Expr | None
    paths: tuple[Path, ...]
    bounds: dict[tuple[int, ...], int] = field(default_factory=dict)

    def bound(self, values: dict[str, Any]) -> int:
        """The cost bound of one evaluation with the variables bound to ``values``."""
        if self.ast is None:
            return PER_CALL_LIMIT + 1
        if not self.paths and () in self.bounds:  # a constant
            return self.bounds[()]
        key = tuple(measure(values, path) for path in self.paths)
        known = self.bounds.get(key)
        if known is None:
            sizes = {path: Range(0, size) for path, size in zip(self.paths, key, strict=True)}
            known = estimate(self.ast, DYN, Fixed(sizes), engine=True).max
            if len(self.bounds) >= CACHED:
                self.bounds.clear()
            self.bounds[key] = known
        return known


def cost_of(source: str) -> Cost:
    try:
        ast = parse(source)
    except CelParseError:
        return Cost(None, ())
    asked = _Asked()
    estimate(ast, DYN, asked, engine=True)
    return Cost(ast, tuple(path for path in asked.asked if path))


def uniform(cost: Cost, size: int) -> int:
    """The bound of ``cost`` with every value it reaches of size ``size``, except the policy's
    ``variables`` (not known before the evaluation: 0, as :func:`measure` has them then)."""
    if cost.ast is None:
        return PER_CALL_LIMIT + 1
    sizes = {path: Range(0, 0 if path[0] == "variables" else size) for path in cost.paths}
    return min(estimate(cost.ast, DYN, Fixed(sizes), engine=True).max, PER_CALL_LIMIT + 1)


def safe_size(costs: Iterable[Cost], limit: int) -> int:
    """The largest power of two (up to 2^20) such that inputs whose JSON is no longer keep the bound
    of all of ``costs`` within ``limit`` (-1: none): a string, list or map is never larger than the JSON
    holding it, and bounds grow with sizes, so such inputs need not be measured."""
    listed = list(costs)
    found = -1
    for exponent in range(21):
        if sum(uniform(c, 2**exponent) for c in listed) > limit:
            break
        found = 2**exponent
    return found


def total(costs: Iterable[Cost], values: dict[str, Any]) -> int:
    """The bounds of several expressions added up (what a whole evaluation may cost)."""
    return sum(min(c.bound(values), PER_CALL_LIMIT + 1) for c in costs)


@dataclass(slots=True)
class Budget:
    """What is left of one evaluation's budget."""

    remaining: int = RUNTIME_BUDGET

    def charge(self, cost: int) -> bool:
        """Charge an expression's evaluation: False when it is over the per-call limit (it is cancelled,
        having spent the limit); raises OutOfBudget when it is over what is left (kube's order: the rest
        of the budget is checked first)."""
        spent = min(cost, PER_CALL_LIMIT + 1)
        if spent > self.remaining:
            self.remaining = -1
            raise OutOfBudget
        self.remaining -= spent
        return cost <= PER_CALL_LIMIT
