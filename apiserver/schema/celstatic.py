"""The static CEL cost checks of a schema, as apiextensions makes them when a CRD is written
(apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go): each rule's estimated cost times
the number of times it can run in one request must stay within ``StaticEstimatedCostLimit``, each message
expression's cost too, and the sum over the whole schema within ``StaticEstimatedCRDCostLimit``.

The number of times (the rule's cardinality) is the product of the ``maxItems`` and ``maxProperties`` of the
lists and maps above the rule (kube's CELSchemaContext); when one of them is unbounded, it is the most
values of the rule's type that fit in a request (kube's maxCardinality). Generation refuses what this finds;
a CRD created at run time is to be judged by the same function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from apiserver.schema.celcompile import compile_problem
from apiserver.schema.celcost import (
    STATIC_CRD_LIMIT,
    STATIC_RULE_LIMIT,
    DeclaredSizes,
    DeclType,
    cost_error,
    decl_type,
    estimate,
    max_cardinality,
    saturating_product,
)
from apiserver.schema.celparse import CelParseError, parse
from apiserver.schema.structural import Schema

__all__ = ["Problem", "rule_problems"]

SchemaPath = tuple[str | int, ...]
Problem = tuple[SchemaPath, str]
"""(path inside the schema dict, message)."""

CONTRIBUTED: Final = (
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
)
TOTAL: Final = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
MOST_EXPENSIVE: Final = 4
FORBIDDEN: Final = "Forbidden: "
"""kube reports every cost refusal as field.Forbidden, whose message starts so."""


@dataclass
class _Total:
    """kube's TotalCost: the sum, and the (at most 4) costliest expressions of at least 1% of the limit."""

    total: int = 0
    costliest: list[tuple[int, SchemaPath]] = field(default_factory=list)

    def observe(self, path: SchemaPath, cost: int) -> None:
        self.total = min(self.total + cost, 2**64 - 1)
        if cost < STATIC_CRD_LIMIT // 100:
            return
        self.costliest.append((cost, path))
        self.costliest.sort(key=lambda entry: -entry[0])
        del self.costliest[MOST_EXPENSIVE:]


def rule_problems(schema: Mapping[str, Any]) -> list[Problem]:
    """Every rule and message expression of ``schema`` (an ``openAPIV3Schema``) that does not compile, and
    every one and the whole schema whose estimated cost exceeds kube's static limits, in kube's words and
    order (a node's rules after its children's; ``Forbidden: ...`` for a cost)."""
    problems: list[Problem] = []
    total = _Total()
    _node(Schema(schema), (), 1, True, problems, total)
    if total.total > STATIC_CRD_LIMIT:
        problems += [(path, FORBIDDEN + CONTRIBUTED) for _, path in total.costliest]
        problems.append(((), FORBIDDEN + cost_error(TOTAL, total.total, STATIC_CRD_LIMIT)))
    return problems


def _node(
    s: Schema,
    path: SchemaPath,
    cardinality: int | None,
    resource_root: bool,
    problems: list[Problem],
    total: _Total,
) -> None:
    factor = _max_elements(s)
    below = (
        None if cardinality is None or factor is None else saturating_product((cardinality, factor))
    )
    children: list[tuple[Schema, SchemaPath]] = [
        (prop, (*path, "properties", name)) for name, prop in s.properties.items()
    ]
    if s.additional_properties is not None:
        children.append((s.additional_properties, (*path, "additionalProperties")))
    if s.items is not None:
        children.append((s.items, (*path, "items")))
    for child, where in children:
        if child.has_rules or child.has_rules_below:
            _node(child, where, below, child.embedded_resource, problems, total)
    if s.has_rules:  # after the children's, as kube's validation reports them
        _rules(s, decl_type(s, resource_root), path, cardinality, problems, total)


def _max_elements(s: Schema) -> int | None:
    """kube's extractMaxElements: how many children a value of ``s`` has at most (None: unbounded)."""
    kind = s.types[0] if len(s.types) == 1 else ""
    if kind == "object" and s.raw.get("additionalProperties") is not None:
        return None if s.max_properties is None else max(s.max_properties, 0)
    if kind == "array":
        return None if s.max_items is None else max(s.max_items, 0)
    return 1


def _rules(
    s: Schema,
    self_type: DeclType | None,
    path: SchemaPath,
    cardinality: int | None,
    problems: list[Problem],
    total: _Total,
) -> None:
    """Each rule's compile problem, or the costs of what compiled over their limits, in the rules' order."""
    for index, raw in enumerate(s.raw.get("x-kubernetes-validations") or ()):
        if not isinstance(raw, Mapping):
            continue
        here = (*path, "x-kubernetes-validations", index)
        failed = compile_problem(raw, self_type)
        failed_key = failed[0] if failed is not None else ""
        if self_type is not None and failed_key != "rule":
            _costs(raw, here, self_type, cardinality, failed_key, problems, total)
        if failed is not None:
            problems.append(((*here, failed[0]), failed[1]))


def _costs(
    raw: Mapping[str, Any],
    here: SchemaPath,
    self_type: DeclType,
    cardinality: int | None,
    failed_key: str,
    problems: list[Problem],
    total: _Total,
) -> None:
    """The estimated costs of a rule and of its message expression (unless it failed to compile)."""
    sizes = DeclaredSizes(self_type)
    times = max_cardinality(self_type.min_size) if cardinality is None else cardinality
    optional = raw.get("optionalOldSelf") is True
    for key, what, limit_times in (
        ("rule", "estimated rule cost", times),
        ("messageExpression", "estimated messageExpression cost", 1),
    ):
        source = str(raw.get(key) or "").strip()
        if not source or key == failed_key:
            continue
        try:
            ast = parse(source)
        except CelParseError as error:
            problems.append(((*here, key), f"apiforge cannot estimate the cost of: {error}"))
            continue
        cost = estimate(ast, self_type, sizes, optional_old_self=optional and key == "rule").max
        cost = saturating_product((cost, limit_times))
        if cost > STATIC_RULE_LIMIT:
            problems.append(((*here, key), FORBIDDEN + cost_error(what, cost, STATIC_RULE_LIMIT)))
        total.observe((*here, key), cost)
