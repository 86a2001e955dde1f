"""A scenario's ``unordered`` steps: kube lists the errors of a custom resource's sibling properties in Go's
random map order (kube-openapi's objectValidator ranges over the schema's ``properties`` map), so two of kube's
answers to one request may differ in order alone. Their answers are compared whatever the order of their
texts' lines, and in nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.golden import Divergence, any_line_order, judge
from oracle.scenario import ScenarioError, load_scenario

KUBE = {
    "exit": 1,
    "stdout": "",
    "stderr": 'The KafkaMirrorMaker2 "m" is invalid:\n'
    "* spec.mirrors[1].sourceCluster: Required value\n"
    "* spec.clusters[2].alias: Required value\n",
}
SWAPPED = {
    **KUBE,
    "stderr": 'The KafkaMirrorMaker2 "m" is invalid:\n'
    "* spec.clusters[2].alias: Required value\n"
    "* spec.mirrors[1].sourceCluster: Required value\n",
}
ONE_LESS = {
    **KUBE,
    "stderr": 'The KafkaMirrorMaker2 "m" is invalid:\n* spec.clusters[2].alias: Required value\n',
}
UNORDERED = frozenset({"judge"})


def test_an_unordered_step_is_the_same_in_another_order() -> None:
    assert judge("s", {"judge": KUBE}, {"judge": SWAPPED}, {}, UNORDERED) == []


def test_only_the_named_steps_are_unordered() -> None:
    assert "differs from kube" in judge("s", {"judge": KUBE}, {"judge": SWAPPED}, {})[0]


def test_an_unordered_step_still_differs_in_its_lines() -> None:
    assert "differs from kube" in judge("s", {"judge": KUBE}, {"judge": ONE_LESS}, {}, UNORDERED)[0]
    exit_code = {**SWAPPED, "exit": 0}
    assert (
        "differs from kube" in judge("s", {"judge": KUBE}, {"judge": exit_code}, {}, UNORDERED)[0]
    )


def test_a_divergence_of_an_unordered_step() -> None:
    """Listed against one recording, it holds against another that differs in order only; it goes when
    apiforge's answer is kube's in any order."""
    listed = {("s", "judge"): Divergence("s", "judge", "open", "why", SWAPPED, ONE_LESS)}
    assert judge("s", {"judge": KUBE}, {"judge": ONE_LESS}, listed, UNORDERED) == []
    gone = judge("s", {"judge": KUBE}, {"judge": SWAPPED}, listed, UNORDERED)
    assert "remove the divergence" in gone[0]


def test_lines_are_sorted_at_every_depth() -> None:
    assert any_line_order({"a": ["b\na", 1]}) == {"a": ["a\nb", 1]}


def test_the_scenario_names_its_unordered_steps(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("unordered: [a]\nsteps:\n- {name: a, kubectl: {args: [version]}}\n")
    assert load_scenario(path).unordered == {"a"}
    path.write_text("unordered: [b]\nsteps:\n- {name: a, kubectl: {args: [version]}}\n")
    with pytest.raises(ScenarioError, match=r"unordered names no step: \['b'\]"):
        load_scenario(path)
