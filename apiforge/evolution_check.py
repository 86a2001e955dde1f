"""What `apiforge check` runs: the old revision read from a directory, a git ref or a live server, compared
with the definitions in the working tree; against a server, its stored objects are checked too
(:mod:`apiforge.stored_objects`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from generator.evolution import Finding, compare
from generator.evolution_revision import from_directory, from_git

__all__ = ["run_check"]


def run_check(
    definitions_dir: Path, ref: str | None, server: str | None, kubeconfig: Path | None
) -> list[Finding]:
    """The findings of the change from the old revision (``ref``, or the server's CRDs) to ``definitions_dir``.
    Raises DefinitionErrors when a revision cannot be read."""
    new = from_directory(definitions_dir)
    if ref is None:
        from apiforge.stored_objects import check_server

        return check_server(new, server, kubeconfig)
    if Path(ref).is_dir():
        return compare(from_directory(Path(ref)), new)
    with tempfile.TemporaryDirectory(prefix="apiforge-check-") as scratch:
        return compare(from_git(ref, definitions_dir, Path(scratch)), new)
