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

from dataclasses import dataclass, field
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

__all__ = ["OUT_OF_BUDGET", "Budget", "Fixed", "Metered", "Plan", "measure", "meter", "plan"]

OUT_OF_BUDGET: Final = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)
MESSAGE_OUT_OF_BUDGET: Final = (
    "messageExpression evaluation failed due to running out of cost budget, no further validation rules"
    " will be run"
)
CACHED: Final = 1024
"""Estimates kept per expression, by the sizes they were made with (then the cache starts over)."""
EXACT_UP_TO: Final = 1024
"""Sizes above are rounded up to 64 steps per power of two (at most 1/32 more): few distinct sizes, so
few estimates to make, even for an object made to have many."""

Path = tuple[str, ...]
ITEMS, VALUES, KEYS, FIELD = range(4)
Plan = tuple[bool, tuple[tuple[int, str], ...]]
"""How to reach a path's values: from oldSelf (else self), then each step (ITEMS, VALUES, KEYS, or FIELD
with its JSON name)."""


def plan(root: DeclType, path: Path) -> Plan | None:
    """The plan of a path of ``root``'s type, or None when the type has no such path."""
    if walk(root, path) is None:
        return None
    steps: list[tuple[int, str]] = []
    node = root
    for step in path[1:]:
        if step in ("@items", "@values"):
            steps.append((ITEMS if step == "@items" else VALUES, ""))
            node = node.elem or node
        elif step == "@keys":
            steps.append((KEYS, ""))
            node = node.key or node
        else:
            name, node = node.fields[step]
            steps.append((FIELD, name))
    return path[0] == "oldSelf", tuple(steps)


def measure(route: Plan, value: Any, old: Any) -> int:
    """The largest size (code points, items, entries; scalars 0) among the values a plan reaches."""
    from_old, steps = route
    values = [old if from_old and old is not None else value]
    for kind, name in steps:
        if kind == FIELD:
            values = [v[name] for v in values if isinstance(v, dict) and name in v]
        elif kind == ITEMS:
            values = [item for v in values if isinstance(v, list) for item in v]
        elif kind == VALUES:
            values = [item for v in values if isinstance(v, dict) for item in v.values()]
        else:
            values = [key for v in values if isinstance(v, dict) for key in v]
    largest = 0
    for v in values:
        if isinstance(v, str | list | dict) and len(v) > largest:
            largest = len(v)
    return largest


def _rounded(size: int) -> int:
    if size <= EXACT_UP_TO:
        return size
    step = 1 << (size.bit_length() - 6)
    return -(-size // step) * step


@dataclass(frozen=True, slots=True)
class Metered:
    """An expression with what the budget needs: its AST, the type of ``self`` where it runs, its cost when
    that does not depend on sizes (``constant``: then nothing is measured), else the paths whose sizes it
    depends on with their plans, and the estimates made so far by those sizes (an estimate walks the AST:
    many times the cost of measuring)."""

    ast: Expr | None
    self_type: DeclType
    optional_old_self: bool
    constant: int | None
    routes: tuple[tuple[Path, Plan], ...] = ()
    estimates: dict[tuple[int, ...], int] = field(default_factory=dict)

    def cost(self, value: Any, old: Any) -> int:
        """The bound of one evaluation with ``self`` = ``value`` and ``oldSelf`` = ``old`` (None: absent)."""
        if self.constant is not None:
            return self.constant
        if self.ast is None:
            return PER_CALL_LIMIT + 1  # unknown: never run (generation refuses such rules)
        key = tuple(_rounded(measure(route, value, old)) for _, route in self.routes)
        known = self.estimates.get(key)
        if known is not None:
            return known
        sizes = Fixed(
            {path: Range(0, size) for (path, _), size in zip(self.routes, key, strict=True)}
        )
        cost = estimate(
            self.ast, self.self_type, sizes, optional_old_self=self.optional_old_self, engine=True
        ).max
        if len(self.estimates) >= CACHED:
            self.estimates.clear()
        self.estimates[key] = cost
        return cost


class Fixed:
    """Sizes known in advance, by path (None for the paths the type does not have)."""

    def __init__(self, sizes: dict[Path, Range]) -> None:
        self.sizes = sizes

    def size(self, path: Path) -> Range | None:
        return self.sizes.get(path)


class _Recording(DeclaredSizes):
    """The declared sizes, noting the paths asked about (the same whatever the sizes)."""

    def __init__(self, root: DeclType) -> None:
        super().__init__(root)
        self.asked: dict[Path, None] = {}

    def size(self, path: Path) -> Range | None:
        self.asked[path] = None
        return super().size(path)


class _NoSizes:
    """Every path the type has is empty: with it, an estimate that equals the declared one does not
    depend on sizes (every cost formula grows with sizes)."""

    def __init__(self, root: DeclType) -> None:
        self.root = root

    def size(self, path: Path) -> Range | None:
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
    recording = _Recording(typed)
    declared = estimate(ast, typed, recording, **options).max
    empty = estimate(ast, typed, _NoSizes(typed), **options).max
    if declared == empty:
        return Metered(ast, typed, optional_old_self, declared)
    routes = []
    for path in recording.asked:
        route = plan(typed, path)
        if route is not None:
            routes.append((path, route))
    return Metered(ast, typed, optional_old_self, None, tuple(routes))


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
        refused = self._spend(cost)
        if refused is None:
            return None
        return OUT_OF_BUDGET if refused else _per_call(rule)

    def spend_message(self, cost: int, source: str) -> str | None:
        """Charge a message expression's evaluation, or say why it does not run (validation stops)."""
        refused = self._spend(cost)
        if refused is None:
            return None
        return MESSAGE_OUT_OF_BUDGET if refused else _message_per_call(source)

    def _spend(self, cost: int) -> bool | None:
        """None: spent; True: over the rest of the budget; False: over the per-call limit."""
        # an evaluation over the limit is cancelled just past it: that much is spent first
        spent = min(cost, PER_CALL_LIMIT + 1)
        if spent > self.remaining:
            self.remaining = -1
            return True
        if cost > PER_CALL_LIMIT:
            self.remaining = -1
            return False
        self.remaining -= spent
        return None
