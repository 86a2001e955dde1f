"""Recorded goldens and the one divergences file: what the oracle answered to each step of a scenario,
normalized, and the differences of apiforge that stay, each with why and both answers side by side.

A replay fails on a step whose answer is neither the oracle's nor the divergence recorded for it, on a listed
divergence apiforge no longer shows (remove it), and on a listed one whose oracle answer is not the golden's
(record again, or update the entry)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DIVERGENCE_STATES = ("open", "kept")
"""open: someone is making apiforge answer as kube does; kept: apiforge answers otherwise on purpose."""


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (kubectl's tables) as literal blocks, so that a golden reads as the terminal did."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not any(c in value for c in "\r\t") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)


def golden_path(directory: Path, scenario: str) -> Path:
    return directory / f"{scenario}.yaml"


def write_golden(
    directory: Path, scenario: str, kube_version: str, outcomes: dict[str, Any]
) -> Path:
    path = golden_path(directory, scenario)
    header = (
        f"# kube-apiserver {kube_version}'s answers, normalized; written by `make conformance`.\n"
    )
    document = {"kube": kube_version, "steps": outcomes}
    path.write_text(header + dump(document))
    return path


def read_golden(directory: Path, scenario: str) -> dict[str, Any]:
    document = yaml.safe_load(golden_path(directory, scenario).read_text())
    steps: dict[str, Any] = document["steps"]
    return steps


@dataclass(frozen=True)
class Divergence:
    scenario: str
    step: str
    state: str
    why: str
    oracle: Any
    apiforge: Any


def read_divergences(path: Path) -> dict[tuple[str, str], Divergence]:
    entries = yaml.safe_load(path.read_text()) or []
    divergences: dict[tuple[str, str], Divergence] = {}
    for entry in entries:
        divergence = Divergence(
            entry["scenario"],
            entry["step"],
            entry["state"],
            entry["why"],
            entry["oracle"],
            entry["apiforge"],
        )
        if divergence.state not in DIVERGENCE_STATES or not divergence.why.strip():
            raise ValueError(
                f"divergence {divergence.scenario}/{divergence.step}: a state and a why"
            )
        key = (divergence.scenario, divergence.step)
        if key in divergences:
            raise ValueError(f"divergence {key} is listed twice")
        divergences[key] = divergence
    return divergences


def judge(
    scenario: str,
    golden: dict[str, Any],
    actual: dict[str, Any],
    divergences: dict[tuple[str, str], Divergence],
    unordered: frozenset[str] = frozenset(),
) -> list[str]:
    """One line per failure of ``actual`` (apiforge's normalized answers) against the golden; the answers of
    the ``unordered`` steps are compared whatever the order of their texts' lines."""
    failures: list[str] = []
    if list(golden) != list(actual):
        failures.append(f"{scenario}: steps {list(actual)} but the golden has {list(golden)}")
    for step, expected in golden.items():
        answer = actual.get(step)
        divergence = divergences.get((scenario, step))
        same = comparison(step in unordered)
        if divergence is None:
            if not same(answer, expected):
                failures.append(_differs(scenario, step, expected, answer))
        elif not same(divergence.oracle, expected):
            failures.append(
                f"{scenario}/{step}: the divergence's oracle answer is not the golden's"
            )
        elif same(answer, expected):
            failures.append(
                f"{scenario}/{step}: apiforge now answers as kube: remove the divergence"
            )
        elif not same(answer, divergence.apiforge):
            failures.append(_differs(scenario, step, divergence.apiforge, answer, "the divergence"))
    return failures


def comparison(unordered: bool) -> Callable[[Any, Any], bool]:
    """How a step's two answers are told the same: equal, or for an unordered step equal but for the order
    of their texts' lines."""
    return _same_lines if unordered else _equal


def _equal(left: Any, right: Any) -> bool:
    return bool(left == right)


def _same_lines(left: Any, right: Any) -> bool:
    return bool(any_line_order(left) == any_line_order(right))


def any_line_order(value: Any) -> Any:
    """``value`` with the lines of each of its texts sorted: what is compared of an answer that lists kube's
    errors in Go's random map order (kubectl's ``is invalid:`` list, one error a line)."""
    if isinstance(value, dict):
        return {key: any_line_order(item) for key, item in value.items()}
    if isinstance(value, list):
        return [any_line_order(item) for item in value]
    if isinstance(value, str):
        return "\n".join(sorted(value.split("\n")))
    return value


def stale_divergences(
    divergences: dict[tuple[str, str], Divergence], goldens: dict[str, dict[str, Any]]
) -> list[str]:
    """Divergences of steps no golden has."""
    return [
        f"divergence {scenario}/{step}: no such recorded step"
        for scenario, step in divergences
        if step not in goldens.get(scenario, {})
    ]


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where two normalized answers differ, one line each (a path, then both values)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        lines: list[str] = []
        for key in [*expected, *(k for k in actual if k not in expected)]:
            lines += differences(expected.get(key), actual.get(key), f"{path}.{key}")
        return lines
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            line
            for index, (left, right) in enumerate(zip(expected, actual, strict=True))
            for line in differences(left, right, f"{path}[{index}]")
        ]
    if expected == actual:
        return []
    return [f"  {path or '.'}:\n    expected {_short(expected)}\n    got      {_short(actual)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) < 600 else text[:600] + "…"


def _differs(scenario: str, step: str, expected: Any, actual: Any, what: str = "kube") -> str:
    detail = "\n".join(differences(expected, actual))
    return f"{scenario}/{step}: apiforge differs from {what}:\n{detail}"
