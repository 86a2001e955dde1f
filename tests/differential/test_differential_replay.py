"""Replays the goldens recorded from kube-apiserver (tests/differential/golden/, `make conformance`) against
a fresh apiforge per scenario: every step's normalized answer must be the oracle's, or the one the divergences
file lists for it (with why it stays). Needs neither Go nor a kube binary."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from oracle.corpus import DIVERGENCES, GOLDEN, SCENARIOS, ApiforgeSpares
from oracle.execute import run_scenario
from oracle.golden import golden_path, judge, read_divergences, read_golden, stale_divergences
from oracle.scenario import load_scenarios

SCENARIO_LIST = load_scenarios(SCENARIOS)


@pytest.fixture(scope="module")
def spares() -> Iterator[ApiforgeSpares]:
    pool = ApiforgeSpares()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def divergences() -> dict[tuple[str, str], Any]:
    return read_divergences(DIVERGENCES)


def test_every_scenario_is_recorded() -> None:
    missing = [s.name for s in SCENARIO_LIST if not golden_path(GOLDEN, s.name).exists()]
    assert not missing, f"no golden for {missing}: run `make conformance`"


def test_no_divergence_outlives_its_step(divergences: dict[tuple[str, str], Any]) -> None:
    goldens = {s.name: read_golden(GOLDEN, s.name) for s in SCENARIO_LIST}
    assert not stale_divergences(divergences, goldens)


@pytest.mark.parametrize("scenario", SCENARIO_LIST, ids=lambda s: s.name)
def test_apiforge_answers_as_kube(
    scenario: Any, divergences: dict[tuple[str, str], Any], spares: ApiforgeSpares
) -> None:
    golden = read_golden(GOLDEN, scenario.name)
    with spares.fresh() as server:
        actual = run_scenario(server, scenario)
    failures = judge(scenario.name, golden, actual, divergences, scenario.unordered)
    assert not failures, "\n".join(failures)
