"""The order in which `make test`'s two workers (pytest-xdist, ``--dist loadfile``) take the test modules.

xdist hands whole modules to whichever worker is free, in collection order. Collected alphabetically, one of the
slowest modules can come last and run alone on one worker while the other idles. Longest first (LPT) instead:
the slowest modules start first and the many short ones fill the gaps at the end. The figures are each
module's seconds (setup + call + teardown of its tests) from a measured run on the 2-core machine; a module
missing from the table is placed by its directory, servers (e2e, integration) before in-process unit tests.
Refresh the table from a run's JUnit XML: ``python -m tests.schedule durations.xml``."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

import pytest

MEASURED: dict[str, float] = {}

UNMEASURED = {"tests/e2e": 10.0, "tests/integration": 10.0}
"""Seconds assumed for a module not in the table, by directory (a unit module: 0, so last)."""


def module_seconds(path: str) -> float:
    """The measured (or assumed) seconds of the module at ``path``, relative to the repository."""
    if path in MEASURED:
        return MEASURED[path]
    return next((s for prefix, s in UNMEASURED.items() if path.startswith(prefix + "/")), 0.0)


def slowest_modules_first(items: list[pytest.Item], root: Path) -> None:
    """Sort ``items`` in place by their module's seconds, descending; stable, so a module's own tests keep
    their order (and its module-scoped fixtures their lifetime)."""
    items.sort(key=lambda item: -module_seconds(item.path.relative_to(root).as_posix()))


def seconds_per_module(junit: Path) -> dict[str, float]:
    """Each module's total seconds in a JUnit XML report (a test case's time is setup + call + teardown)."""
    totals: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(junit).iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next(
            (i for i, part in enumerate(parts) if part.startswith("test_")), len(parts) - 1
        )
        totals["/".join(parts[: module + 1]) + ".py"] += float(case.get("time", "0"))
    return dict(sorted(totals.items(), key=lambda entry: -entry[1]))


if __name__ == "__main__":
    for path, seconds in seconds_per_module(Path(sys.argv[1])).items():
        if seconds >= 1:
            print(f'    "{path}": {seconds:.0f},')
