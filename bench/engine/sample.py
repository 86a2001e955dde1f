"""What one phase of one round measured, and the interleaved rounds that produce the samples."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.common import rotated


@dataclass(frozen=True)
class Sample:
    """One phase of one round: ops (or LISTs) per second, and CPU per op where measured."""

    rate: float
    server_us: float = float("nan")
    etcd_us: float = float("nan")
    client_us: float = float("nan")


Phase = tuple[str, str]
"""(storage, phase name)."""


def interleave(phases: dict[Phase, Callable[[], Sample]], rounds: int) -> dict[Phase, list[Sample]]:
    """Every phase once per round, in an order rotated each round."""
    samples: dict[Phase, list[Sample]] = {phase: [] for phase in phases}
    keys = list(phases)
    for round_number in range(rounds):
        for index in rotated([str(i) for i in range(len(keys))], round_number):
            phase = keys[int(index)]
            samples[phase].append(phases[phase]())
    return samples
