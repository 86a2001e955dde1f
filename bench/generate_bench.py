"""How long `make generate` takes: cold and no-op, for the shipped definitions and for 50 synthetic kinds.

Every run is a fresh ``python -m apiforge generate`` subprocess (so nothing is cached in memory):

- cold: into an empty output directory, so every file is rendered and formatted;
- no-op: again on the same output directory with nothing changed, which must only read, hash and
  compare (the output must say "is up to date"; a run that changes files is flagged, since it means
  the generator's own sources changed mid-run or its output is not deterministic).

The synthetic set is 5 groups x 10 namespaced kinds, each with spec and status, printer columns, the
status subresource, and a second (v1beta1) version for every third kind. Reported: wall seconds and
the child's CPU seconds (less disturbed by other load). Targets, for the shipped set: cold < 5 s,
no-op < 1 s.

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
SYNTHETIC_GROUPS = 5
SYNTHETIC_KINDS_PER_GROUP = 10
COLD_TARGET = 5.0
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
    return Run(wall, cpu, result.stdout.strip())


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


def write_synthetic(root: Path) -> int:
    """Write the synthetic definitions under ``root``; returns how many kinds."""
    count = 0
    for g in range(SYNTHETIC_GROUPS):
        group = f"bench{g}.example.com"
        (root / group).mkdir(parents=True)
        for k in range(SYNTHETIC_KINDS_PER_GROUP):
            kind = f"Widget{g}N{k}"
            text = SYNTHETIC_SPEC.format(group=group, kind=kind, short=f"w{g}n{k}")
            text += SYNTHETIC_VERSION.format(name="v1", storage="true", default="")
            if k % 3 == 0:
                text += SYNTHETIC_VERSION.format(
                    name="v1beta1", storage="false", default="\n          default: 1"
                )
            (root / group / f"{kind.lower()}.yaml").write_text(text)
            count += 1
    return count


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
        kinds = write_synthetic(work / "definitions")
        synthetic_cold = [generate(work / "definitions", work / "synthetic")]
        synthetic_noop = [
            generate(work / "definitions", work / "synthetic") for _ in range(NOOP_RUNS)
        ]
    print("generate bench: seconds wall, median (min-max), and the child's CPU seconds")
    lines = {
        "shipped definitions, cold": shipped_cold,
        "shipped definitions, no-op": shipped_noop,
        f"{kinds} synthetic kinds, cold": synthetic_cold,
        f"{kinds} synthetic kinds, no-op": synthetic_noop,
    }
    for name, runs in lines.items():
        print(f"  {name:<32} {_fmt(runs)}   [{runs[-1].output}]")
    rows = [
        Row(
            "generate",
            "shipped cold (s)",
            _fmt(shipped_cold),
            f"< {COLD_TARGET:.0f} s",
            median([r.wall for r in shipped_cold]) < COLD_TARGET,
        ),
        Row(
            "generate",
            "shipped no-op (s)",
            _fmt(shipped_noop),
            f"< {NOOP_TARGET:.0f} s",
            median([r.wall for r in shipped_noop]) < NOOP_TARGET,
        ),
        Row("generate", f"{kinds} kinds cold (s)", _fmt(synthetic_cold)),
        Row("generate", f"{kinds} kinds no-op (s)", _fmt(synthetic_noop)),
        Row(
            "generate",
            f"{kinds} kinds cold / shipped cold",
            f"{median([r.wall for r in synthetic_cold]) / median([r.wall for r in shipped_cold]):.1f}x",
        ),
    ]
    not_noop = [r for r in (*shipped_noop, *synthetic_noop) if not r.was_noop]
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
