"""The runtime CEL budget (apiserver.schema.celbudget through apiserver.schema.cel.validate_rules), as kube
keeps it in apiextensions-apiserver pkg/apiserver/schema/cel/validation.go: each evaluation at most
PerCallLimit (1,000,000), all the rules of one object RuntimeCELCostBudget (10,000,000), kube's errors at
the node, and nothing evaluated once either is exhausted."""

from __future__ import annotations

import time
from typing import Any

from apiserver.schema.cel import validate_rules
from apiserver.schema.celbudget import measure, meter, plan
from apiserver.schema.celcost import DeclaredSizes, decl_type, estimate
from apiserver.schema.celparse import parse
from apiserver.schema.structural import Schema

OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)


def check(obj: Any, schema: dict[str, Any], old: Any = None) -> list[tuple[str, str, str]]:
    return [(c.reason, c.field, c.message) for c in validate_rules(obj, old, schema, [])]


def list_with(*rules: dict[str, Any], items: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "l": {
                "type": "array",
                "items": items or {"type": "integer"},
                "x-kubernetes-validations": list(rules),
            },
            "after": {
                "type": "integer",
                "x-kubernetes-validations": [{"rule": "false", "message": "ran after"}],
            },
        },
    }


def test_an_evaluation_over_the_per_call_limit_does_not_run_and_ends_validation() -> None:
    """A rule over an unbounded list passes kube's static check (6.3M < 10M) but, on 200,000 items, one
    evaluation would cost 1,000,002: kube cancels it ('actual cost limit exceeded') and runs no further
    rule; here it is refused before it runs, so it takes no time."""
    schema = list_with({"rule": "self.all(x, x >= 0)"})
    started = time.perf_counter()
    found = check({"l": list(range(200_000)), "after": 1}, schema)
    assert time.perf_counter() - started < 0.5
    assert found == [
        (
            "FieldValueInvalid",
            "l",
            "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further"
            " validation rules will be run due to call cost exceeds limit for rule: self.all(x, x >= 0)",
        )
    ]
    assert check({"l": list(range(3000)), "after": 1}, schema) == [
        ("FieldValueInvalid", "after", "Invalid value: 1: ran after")
    ]


def test_the_rules_of_one_object_share_the_budget() -> None:
    """Eleven quadratic rules of 977,552 each on 570 items: ten fit in 10,000,000, the eleventh does not
    and ends validation at its node; the rules after it (and other nodes) do not run."""
    quadratic = "self.all(x, self.all(y, true))"
    rules = [{"rule": quadratic, "message": f"rule {i}"} for i in range(11)]
    schema = list_with(*rules, {"rule": "false", "message": "never"})
    items = list(range(570))
    metered = meter(quadratic, decl_type(Schema(schema["properties"]["l"])), False)
    assert metered.cost(items, None) == 3 * 570 * 570 + 5 * 570 + 2
    assert check({"l": items, "after": 1}, schema) == [
        ("FieldValueInvalid", "l", f'Invalid value: "array": {OUT_OF_BUDGET}')
    ]
    assert check({"l": items[:100], "after": 1}, schema) == [
        ("FieldValueInvalid", "l", "Invalid value: never"),
        ("FieldValueInvalid", "after", "Invalid value: 1: ran after"),
    ]


def test_map_and_filter_are_charged_for_the_lists_the_engine_copies() -> None:
    """cel-rust copies the accumulated list at each step of map and filter (3,000 items: ~0.5 s), where
    cel-go concatenates in constant time: the runtime charges the copies, so 3,000 items are refused at
    once and 500 run."""
    schema = list_with({"rule": "self.map(x, x * 2).size() >= 0"})
    started = time.perf_counter()
    refused = check({"l": list(range(3000)), "after": 1}, schema)
    assert time.perf_counter() - started < 0.1
    assert "call cost exceeds limit" in refused[0][2]
    assert check({"l": list(range(500)), "after": 1}, schema) == [
        ("FieldValueInvalid", "after", "Invalid value: 1: ran after")
    ]


def test_a_message_expression_is_charged_too() -> None:
    """kube evaluates a failed rule's messageExpression with the same budget (evalMessageExpression): one
    whose bound is over the per-call limit cannot run. string() of a number is bounded by the number's
    formatting (kube meters what it actually costs: a few units), not refused as unbounded."""
    pairs = "self.map(a, self.map(b, a)).size() > 0 ? 'many' : 'none'"
    schema = list_with({"rule": "size(self) < 2", "messageExpression": pairs})
    schema["properties"]["l"]["maxItems"] = 5000
    schema["properties"]["n"] = {
        "type": "integer",
        "x-kubernetes-validations": [
            {"rule": "self > 0", "messageExpression": "'n is ' + string(self)"}
        ],
    }
    assert check({"l": list(range(2000)), "n": -1}, schema) == [
        (
            "FieldValueInvalid",
            "l",
            'Invalid value: "array": no further validation rules will be run due to call cost exceeds'
            f' limit for messageExpression: "{pairs}"',
        ),
    ]
    assert check({"n": -1}, schema) == [("FieldValueInvalid", "n", "Invalid value: -1: n is -1")]


def test_rules_whose_cost_does_not_depend_on_sizes_measure_nothing() -> None:
    items = decl_type(Schema({"type": "array", "items": {"type": "string"}}))
    assert meter("size(self) < 10", items, False).constant == 3
    assert meter("self.all(x, x != '')", items, False).constant is None


def test_actual_sizes_are_read_at_each_path_and_never_exceed_the_declared_ones() -> None:
    raw = {
        "type": "object",
        "properties": {
            "a-b": {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 8}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    self_type = decl_type(Schema(raw))
    assert self_type is not None
    value = {"a-b": ["x", "yyy"], "m": {"key": "v" * 20, "k": ""}}
    old = {"a-b": ["z" * 7]}

    def size(*path: str) -> int | None:
        route = plan(self_type, path)
        return None if route is None else measure(route, value, old)

    assert size("self", "a__dash__b") == 2
    assert size("self", "a__dash__b", "@items") == 3
    assert size("oldSelf", "a__dash__b", "@items") == 7
    assert size("self", "m", "@keys") == 3
    assert size("self", "m", "@values") == 20
    assert size("self", "nothing") is None
    for rule in ("self.a__dash__b.all(x, x.contains('y'))", "self.m.all(k, self.m[k].size() > 0)"):
        charged = meter(rule, self_type, False).cost(value, old)
        declared = estimate(parse(rule), self_type, DeclaredSizes(self_type), engine=True).max
        assert 0 < charged < declared
