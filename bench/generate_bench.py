"""How long `make generate` takes: for the shipped definitions, and for 200 synthetic kinds cold, after one
added kind, and with nothing changed (< 10 s, < 2 s, < 1 s).

Every run is a fresh ``python -m apiforge generate`` subprocess (so nothing is cached in memory):

- cold: into an empty output directory, so every file is rendered and formatted;
- one added kind: a new kind in one existing group-version, on the cold run's output (its build cache):
  that group-version, its group and the shared files are rendered again;
- no-op: again with nothing changed, which must only read, hash and compare (the output must say "is up to
  date"; a run that changes files is flagged, since it means the generator's own sources changed mid-run or
  its output is not deterministic).

The synthetic set is 20 groups x 10 namespaced kinds, each with spec and status, printer columns, the status
subresource, and a second (v1beta1) version for every third kind. Reported: wall seconds and the child's CPU
seconds (its worker processes included; less disturbed by other load than the wall time, on a shared machine
the figure to compare across runs).

Run from the repository root: ``.venv/bin/python -m bench.generate_bench``.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import REPO, Row, median

SHIPPED_ROUNDS = 2
NOOP_RUNS = 2
ADDED_RUNS = 2
SYNTHETIC_GROUPS = 20
SYNTHETIC_KINDS_PER_GROUP = 10
COLD_TARGET = 5.0
SYNTHETIC_COLD_TARGET = 10.0
ADDED_TARGET = 2.0
NOOP_TARGET = 1.0
TIMEOUT = 300.0


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    output: str

    @property
    def was_noop(self) -> bool:
        return "is up to date" in self.output


def generate(definitions: Path, out: Path) -> Run:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "apiforge",
            "generate",
            "--definitions",
            str(definitions),
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"apiforge generate failed:\n{result.stdout}{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # the summary: the last line, after a progress line per group-version rendered
    return Run(wall, cpu, result.stdout.strip().rsplit("\n", 1)[-1])


SYNTHETIC_SPEC = """\
group: {group}
kind: {kind}
shortNames: [{short}]
description: {kind} is a synthetic kind of the generate benchmark.
subresources:
  status: true
printerColumns:
  - name: Size
    type: integer
    jsonPath: .spec.size
  - name: Phase
    type: string
    jsonPath: .status.phase
  - name: Age
    type: date
    jsonPath: .metadata.creationTimestamp
versions:
"""
SYNTHETIC_VERSION = """\
  {name}:
    storage: {storage}
    schema:
      spec:
        image: string
        size:
          type: integer
          minimum: 0{default}
        labels: map[string]string
        mode:
          type: string
          enum: [fast, slow]
        ports: "[]integer"
      status:
        phase: string
        observedGeneration: integer
        conditions: "[]Condition"
"""


def write_kind(root: Path, group_number: int, kind: str, short: str, beta: bool) -> None:
    """One synthetic definition: ``kind`` in group ``bench<group_number>.example.com``."""
    group = f"bench{group_number}.example.com"
    (root / group).mkdir(parents=True, exist_ok=True)
    text = SYNTHETIC_SPEC.format(group=group, kind=kind, short=short)
    text += SYNTHETIC_VERSION.format(name="v1", storage="true", default="")
    if beta:
        text += SYNTHETIC_VERSION.format(
            name="v1beta1", storage="false", default="\n          default: 1"
        )
    (root / group / f"{kind.lower()}.yaml").write_text(text)


def write_synthetic(root: Path) -> int:
    """Write the synthetic definitions under ``root``; returns how many kinds."""
    for g in range(SYNTHETIC_GROUPS):
        for k in range(SYNTHETIC_KINDS_PER_GROUP):
            write_kind(root, g, f"Widget{g}N{k}", f"w{g}n{k}", beta=k % 3 == 0)
    return SYNTHETIC_GROUPS * SYNTHETIC_KINDS_PER_GROUP


def _verdict(runs: list[Run], target: float) -> bool:
    return median([r.wall for r in runs]) < target


def _fmt(runs: list[Run]) -> str:
    walls = [r.wall for r in runs]
    text = f"{median(walls):.2f}"
    if len(runs) > 1:
        text += f" ({min(walls):.2f}-{max(walls):.2f})"
    return text + f", CPU {median([r.cpu for r in runs]):.2f}"


def run() -> list[Row]:
    shipped_cold: list[Run] = []
    shipped_noop: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="generate-bench-") as work_dir:
        work = Path(work_dir)
        for round_number in range(SHIPPED_ROUNDS):  # cold, then no-ops on that output
            out = work / f"shipped-{round_number}"
            shipped_cold.append(generate(REPO / "definitions", out))
            runs = NOOP_RUNS if round_number == 0 else 1
            shipped_noop.extend(generate(REPO / "definitions", out) for _ in range(runs))
            shutil.rmtree(out)
        definitions, out = work / "definitions", work / "synthetic"
        kinds = write_synthetic(definitions)
        cold = [generate(definitions, out)]
        added = []
        for number in range(ADDED_RUNS):  # a new kind in bench<number>.example.com/v1 each time
            write_kind(definitions, number, f"Added{number}", f"added{number}", beta=False)
            added.append(generate(definitions, out))
        noop = [generate(definitions, out) for _ in range(NOOP_RUNS)]
    print("generate bench: seconds wall, median (min-max), and the child's CPU seconds")
    lines = {
        "shipped definitions, cold": shipped_cold,
        "shipped definitions, no-op": shipped_noop,
        f"{kinds} synthetic kinds, cold": cold,
        f"{kinds} synthetic kinds, one added kind": added,
        f"{kinds} synthetic kinds, no-op": noop,
    }
    for name, runs in lines.items():
        print(f"  {name:<40} {_fmt(runs)}   [{runs[-1].output}]")
    targets = {
        "shipped cold (s)": (shipped_cold, COLD_TARGET),
        "shipped no-op (s)": (shipped_noop, NOOP_TARGET),
        f"{kinds} kinds cold (s)": (cold, SYNTHETIC_COLD_TARGET),
        f"{kinds} kinds, one added kind (s)": (added, ADDED_TARGET),
        f"{kinds} kinds no-op (s)": (noop, NOOP_TARGET),
    }
    rows = [
        Row("generate", metric, _fmt(runs), f"< {target:.0f} s", _verdict(runs, target))
        for metric, (runs, target) in targets.items()
    ]
    not_noop = [r for r in (*shipped_noop, *noop) if not r.was_noop]
    if not_noop:
        rows.append(
            Row("generate", "no-op runs that changed files", f"{len(not_noop)}", "0", False)
        )
        print(
            f"  warning: {len(not_noop)} no-op run(s) rewrote files ({not_noop[0].output}):"
            " the generator's sources changed during the run (edits in progress?) or its output"
            " is not deterministic"
        )
    return rows


def main() -> None:
    from bench.common import print_rows

    rows = run()
    print("summary")
    print_rows(rows)


if __name__ == "__main__":
    main()
