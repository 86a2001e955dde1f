"""The units of generation: what is rendered, cached and run in parallel as one piece, and what each depends on.

- one unit per group-version (its package directory and its OpenAPI document): adding a kind re-renders only
  the group-versions it is served in;
- one per group (the group package, its internal models and its REST bindings);
- the meta/v1 package, which depends on nothing but the generator;
- the shared files (the package root, server.py and the aggregate OpenAPI documents), which depend on
  everything and are rendered on every run that renders anything.

Light on purpose (no generator back end imported): the no-op path fingerprints units without loading them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from generator.definition import Definition
from generator.jsontext import Entries
from generator.plan import GroupPlan, Plan, VersionPlan

META_UNIT = "<meta>"
SHARED_UNIT = ""


@dataclass(frozen=True)
class Rendered:
    """One unit's files (path → text) and, for a served group-version, its OpenAPI entries, which the shared
    unit's aggregate documents are made of (kept in the build cache with the files)."""

    files: dict[str, str]
    openapi: dict[str, Entries] = field(default_factory=dict)


Progress = Callable[[str], None]
"""Where a run reports each group-version as it is rendered (one line of text each)."""

Job = GroupPlan | VersionPlan | None
"""What one unit is rendered from: its group-version, its group, or nothing (the meta/v1 package)."""


def unit_key(job: Job) -> str:
    """The unit's name in the build cache (package names: a group-version's has a dot, a group's none)."""
    if job is None:
        return META_UNIT
    return job.package


def jobs(plan: Plan) -> list[Job]:
    """Every unit of ``plan`` but the shared one, group-versions with the most kinds first (the longest jobs
    start first, so parallel workers finish together)."""
    versions = sorted(
        (version for group in plan.groups for version in group.versions),
        key=lambda version: -len(version.kinds),
    )
    return [*versions, *plan.groups, None]


def unit_inputs(job: Job) -> tuple[str, tuple[Definition, ...]]:
    """What the unit's files are a function of, besides the generator: its name and its definitions."""
    if job is None:
        return META_UNIT, ()
    if isinstance(job, VersionPlan):
        return job.package, tuple(kind.definition for kind in job.kinds)
    return job.package, job.definitions
