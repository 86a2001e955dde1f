"""`apiforge generate`: load → check → plan → emit, with the no-op and --check paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.cache import (
    cached_definitions,
    inputs_digest,
    manifest_data,
    reusable_units,
    unchanged_output,
    unit_fingerprints,
)
from generator.emit import Difference, differences, write_manifest, write_output
from generator.load_cache import checked_definitions
from generator.plan import build_plan
from generator.units import Progress


@dataclass(frozen=True)
class GenerateConfig:
    """One run's settings, passed through every stage (no globals)."""

    definitions_dir: Path
    out_dir: Path
    check: bool = False
    workers: int = 0  # processes rendering units; 0: one per core
    progress: Progress | None = None  # told of each group-version rendered


def generate(config: GenerateConfig) -> list[Difference]:
    """Regenerate (or, with ``check``, compare) ``out_dir``; returns the differences found or written.

    Invalid definitions raise DefinitionErrors before anything is written, so generated/ is left untouched.
    ``check`` renders everything and reads no cache, so it fails whenever the files differ from a fresh run.
    """
    inputs = ""
    if not config.check and config.definitions_dir.is_dir():
        inputs = inputs_digest(config.definitions_dir)
        files = unchanged_output(config.out_dir, inputs)
        if files is not None and not differences(config.out_dir, files):
            return []
    checked = checked_definitions(
        config.definitions_dir, None if config.check else cached_definitions(config.out_dir)
    )
    plan = build_plan(checked.definitions)
    fingerprints = unit_fingerprints(plan, checked.digest)
    cached = {} if config.check else reusable_units(config.out_dir, fingerprints)
    if set(cached) == set(fingerprints):  # e.g. a comment edited: no unit's inputs changed
        files = {path: text for unit in cached.values() for path, text in unit.files.items()}
        if not differences(config.out_dir, files):
            write_manifest(
                config.out_dir, manifest_data(cached, fingerprints, inputs, checked.files)
            )
            return []
    # Imported here: datamodel-code-generator and the OpenAPI validator take a while to import, and a run
    # that changes nothing needs neither.
    from generator.render import render_plan

    units = render_plan(plan, cached, config.workers, config.progress)
    files = {path: text for unit in units.values() for path, text in unit.files.items()}
    if config.check:
        return differences(config.out_dir, files)
    changes = write_output(config.out_dir, files)
    write_manifest(config.out_dir, manifest_data(units, fingerprints, inputs, checked.files))
    return changes
