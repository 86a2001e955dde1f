"""Stage 4 driver: write the rendered files atomically, only what changed, and nothing when inputs are unchanged.

A manifest (``generated/.manifest.json``) records a fingerprint of each unit's inputs (its definitions plus the
compiler and templates themselves) and a hash of every file written. When a unit's fingerprint and files still
match, it is neither re-rendered nor re-formatted, which keeps a no-op `make generate` well under a second.
The manifest is a local build cache, not output: it is not committed and `--check` ignores it, so the
committed output depends only on what the generator writes, never on the files of a working tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path

from generator.definition import Definition
from generator.load import builtin_definitions
from generator.plan import Plan

MANIFEST = ".manifest.json"


@dataclass(frozen=True)
class Difference:
    """One way the output directory differs from what generation produces."""

    path: str
    change: str  # "missing", "changed" or "stale"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _package_files(node: Traversable, name: str) -> Iterator[tuple[str, bytes]]:
    """Every file of the package (its sources and the templates inside it) by name, in a stable order; read
    through importlib.resources, so an installed generator fingerprints what it was installed with."""
    for child in sorted(node.iterdir(), key=lambda entry: entry.name):
        path = f"{name}/{child.name}"
        if child.is_dir():
            if child.name != "__pycache__":
                yield from _package_files(child, path)
        elif child.is_file():
            yield path, child.read_bytes()


def tool_fingerprint() -> str:
    """What the output depends on besides the definitions: compiler sources, templates, generator versions."""
    digest = hashlib.sha256()
    for name, data in _package_files(resources.files("generator"), "generator"):
        digest.update(name.encode())
        digest.update(data)
    for package in ("datamodel-code-generator", "black"):
        digest.update(f"{package}={metadata.version(package)}".encode())
    return digest.hexdigest()


def unit_fingerprints(plan: Plan, definitions_dir: Path) -> dict[str, str]:
    """Each unit's input fingerprint; definition sources count relative to the definitions directory, so the
    same project gives the same manifest however the directory was named on the command line."""
    tool = tool_fingerprint()

    builtin_dir = builtin_definitions()

    def relative(source: Path) -> Path:
        if source.is_relative_to(builtin_dir):
            return Path("<builtin>") / source.relative_to(builtin_dir)
        return source.relative_to(definitions_dir)

    def portable(definitions: tuple[Definition, ...]) -> str:
        return repr([replace(d, source=relative(d.source)) for d in definitions])

    fingerprints = {
        group.package: _sha256((tool + portable(group.definitions)).encode())
        for group in plan.groups
    }
    everything = tuple(d for group in plan.groups for d in group.definitions)
    fingerprints[""] = _sha256((tool + portable(everything)).encode())
    return fingerprints


def _read_manifest(out_dir: Path) -> dict[str, dict[str, object]]:
    try:
        units: dict[str, dict[str, object]] = json.loads((out_dir / MANIFEST).read_text())["units"]
    except (OSError, ValueError, KeyError):
        return {}
    return units


def reusable_units(out_dir: Path, fingerprints: dict[str, str]) -> dict[str, dict[str, str]]:
    """The units whose inputs are unchanged and whose files on disk are still exactly what was written."""
    reusable: dict[str, dict[str, str]] = {}
    for unit, entry in _read_manifest(out_dir).items():
        files = entry.get("files")
        if fingerprints.get(unit) != entry.get("fingerprint") or not isinstance(files, dict):
            continue
        contents: dict[str, str] = {}
        for path, digest in files.items():
            try:
                data = (out_dir / path).read_bytes()
            except OSError:
                break
            if _sha256(data) != digest:
                break
            contents[path] = data.decode()
        else:
            reusable[unit] = contents
    return reusable


def manifest_text(units: dict[str, dict[str, str]], fingerprints: dict[str, str]) -> str:
    manifest = {
        "generator": "apiforge",
        "units": {
            unit: {
                "fingerprint": fingerprints[unit],
                "files": {path: _sha256(text.encode()) for path, text in sorted(files.items())},
            }
            for unit, files in sorted(units.items())
        },
    }
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def _existing_files(out_dir: Path) -> set[str]:
    if not out_dir.exists():
        return set()
    return {
        str(path.relative_to(out_dir))
        for path in out_dir.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.name != MANIFEST
    }


def differences(out_dir: Path, files: dict[str, str]) -> list[Difference]:
    found = []
    for path, text in sorted(files.items()):
        target = out_dir / path
        if not target.exists():
            found.append(Difference(path, "missing"))
        elif target.read_bytes() != text.encode():
            found.append(Difference(path, "changed"))
    found.extend(
        Difference(path, "stale") for path in sorted(_existing_files(out_dir) - set(files))
    )
    return found


def _write_atomically(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode())
        os.chmod(temporary, 0o644)  # mkstemp makes private files; generated code is ordinary source
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_manifest(out_dir: Path, text: str) -> None:
    _write_atomically(out_dir / MANIFEST, text)


def write_output(out_dir: Path, files: dict[str, str]) -> list[Difference]:
    """Bring ``out_dir`` to exactly ``files``: write what differs, remove stale files; report what changed."""
    changes = differences(out_dir, files)
    for change in changes:
        target = out_dir / change.path
        if change.change == "stale":
            target.unlink()
        else:
            _write_atomically(target, files[change.path])
    for directory in sorted({p for p in out_dir.rglob("*") if p.is_dir()}, reverse=True):
        if directory.name != "__pycache__" and not any(directory.iterdir()):
            directory.rmdir()
    return changes
