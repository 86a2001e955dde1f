"""The cost bound and budget of admission policy expressions (builtin/admissionregistration/cost.py): bounds
follow the sizes of the values an expression reads, and the budget charges in kube's order (filter.go
ForInput: the rest of the budget first, then the per-call limit)."""

from __future__ import annotations

import pytest

from apiserver.schema.celcost import PER_CALL_LIMIT, RUNTIME_BUDGET
from builtin.admissionregistration.cost import (
    OUT_OF_BUDGET,
    Budget,
    OutOfBudget,
    cost_of,
    measure,
    safe_size,
)


def test_measure_reads_lists_and_maps_by_the_value() -> None:
    values = {
        "object": {"spec": {"items": [{"name": "abc"}, {"name": "abcdef"}], "m": {"k": "xy"}}}
    }
    assert measure(values, ("object", "spec", "items")) == 2
    # the estimator steps into an untyped range as into a map's keys; a list's items are meant
    assert measure(values, ("object", "spec", "items", "@keys", "name")) == 6
    assert measure(values, ("object", "spec", "m", "@keys")) == 1
    assert measure(values, ("object", "spec", "m", "@values")) == 2
    assert measure(values, ("object", "missing")) == 0
    assert measure(values, ("params",)) == 0


def test_the_bound_grows_with_the_object_and_is_constant_without_one() -> None:
    pairwise = cost_of("object.l.all(a, object.l.all(b, a == b))")
    small = pairwise.bound({"object": {"l": list(range(10))}})
    large = pairwise.bound({"object": {"l": list(range(1000))}})
    assert 0 < small < PER_CALL_LIMIT < large
    constant = cost_of("object.spec.replicas <= 5")
    assert constant.bound({}) == constant.bound({"object": {"spec": {"replicas": 9}}}) < 10
    assert cost_of("this is not cel (").bound({}) > PER_CALL_LIMIT


def test_budget_charges_in_kubes_order() -> None:
    budget = Budget()
    assert budget.charge(PER_CALL_LIMIT)
    assert not budget.charge(PER_CALL_LIMIT + 5)  # cancelled, having spent the limit
    assert budget.remaining == RUNTIME_BUDGET - 2 * PER_CALL_LIMIT - 1
    with pytest.raises(OutOfBudget, match=OUT_OF_BUDGET):
        for _ in range(10):
            budget.charge(PER_CALL_LIMIT)
    with pytest.raises(OutOfBudget):
        budget.charge(0)


def test_inputs_up_to_the_safe_size_stay_under_the_limit_unmeasured() -> None:
    """cost.safe_size: a pairwise comparison is heavy from small inputs on, a constant never is; inputs
    whose JSON is within the safe size are within the limit, as measuring them says."""
    pairwise = cost_of("object.l.all(a, object.l.all(b, a == b))")
    limit = 10_000
    safe = safe_size([pairwise], limit)
    assert 0 < safe < 1024
    assert pairwise.bound({"object": {"l": list(range(safe))}}) <= limit
    assert pairwise.bound({"object": {"l": list(range(safe * 4))}}) > limit
    assert safe_size([cost_of("object.spec.replicas <= 5")], limit) == 2**20
    assert safe_size([cost_of("not cel (")], limit) == -1
