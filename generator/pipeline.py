"""`apiforge generate`: load → check → plan → emit, with the no-op and --check paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.emit import (
    Difference,
    differences,
    manifest_text,
    reusable_units,
    unit_fingerprints,
    write_manifest,
    write_output,
)
from generator.load import load_checked
from generator.plan import build_plan


@dataclass(frozen=True)
class GenerateConfig:
    """One run's settings, passed through every stage (no globals)."""

    definitions_dir: Path
    out_dir: Path
    check: bool = False


def generate(config: GenerateConfig) -> list[Difference]:
    """Regenerate (or, with ``check``, compare) ``out_dir``; returns the differences found or written.

    Invalid definitions raise DefinitionErrors before anything is written, so generated/ is left untouched.
    """
    plan = build_plan(load_checked(config.definitions_dir))
    fingerprints = unit_fingerprints(plan, config.definitions_dir)
    cached = None if config.check else reusable_units(config.out_dir, fingerprints)
    if cached is not None and set(cached) == set(fingerprints):
        files = {path: text for unit in cached.values() for path, text in unit.items()}
        if not differences(config.out_dir, files):
            return []
    # Imported here: black and datamodel-code-generator take a while to import, and a no-op run needs neither.
    from generator.render import render_plan

    units = render_plan(plan, cached)
    files = {path: text for unit in units.values() for path, text in unit.items()}
    if config.check:
        return differences(config.out_dir, files)
    changes = write_output(config.out_dir, files)
    write_manifest(config.out_dir, manifest_text(units, fingerprints))
    return changes
