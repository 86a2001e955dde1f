"""The build cache: what each unit's output is a function of, and the manifest that remembers it.

The manifest (``generated/.manifest.json``) records a digest of every input of the run (each definition file's
path and bytes, the generator's sources and templates, the versions of apiforge and of the tools whose output we
commit), each unit's fingerprint (the same, for that unit's definitions only), the hash of every file written,
and each served group-version's OpenAPI entries. So:

- a no-op run (same inputs, files as written) parses no definition and renders nothing;
- otherwise a unit whose fingerprint and files are unchanged is reused as is: adding a kind re-renders its
  group-versions, its group and the shared files only.

It is two JSON lines: the index, then the OpenAPI entries (megabytes at a few hundred kinds), which only a run
that renders reads. It is a local build cache, not output: it is not committed and ``--check`` ignores it, so the
committed output depends only on what the generator writes, never on the files of a working tree.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from generator.definition import Definition
from generator.load import builtin_definitions, definition_files
from generator.plan import Plan
from generator.units import SHARED_UNIT, Rendered, jobs, unit_inputs

MANIFEST = ".manifest.json"
# The distributions whose version changes the output: apiforge itself (an installed generator's sources may
# not be what importlib.resources finds), and the tools that write generated code (models, formatting).
VERSIONED = ("apiforge", "datamodel-code-generator", "ruff")
BUILTIN = Path("<builtin>")


def sha256(data: bytes) -> str:
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


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def tool_fingerprint() -> str:
    """What the output depends on besides the definitions: compiler sources, templates, tool versions."""
    digest = hashlib.sha256()
    for name, data in _package_files(resources.files("generator"), "generator"):
        digest.update(name.encode())
        digest.update(data)
    for distribution in VERSIONED:
        digest.update(f"{distribution}={_version(distribution)}".encode())
    return digest.hexdigest()


def inputs_digest(definitions_dir: Path) -> str:
    """Everything a run reads, unparsed: the tool and each definition file's relative path and bytes."""
    digest = hashlib.sha256(tool_fingerprint().encode())
    for label, directory in ((BUILTIN, builtin_definitions()), (Path(), definitions_dir)):
        for file in definition_files(directory):
            digest.update(f"\0{label / file.relative_to(directory)}\0".encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def unit_fingerprints(plan: Plan, definitions_dir: Path) -> dict[str, str]:
    """Each unit's input fingerprint; definition sources count relative to the definitions directory, so the
    same project gives the same manifest however the directory was named on the command line."""
    tool = tool_fingerprint()
    builtin_dir = builtin_definitions()

    def relative(source: Path) -> Path:
        if source.is_relative_to(builtin_dir):
            return BUILTIN / source.relative_to(builtin_dir)
        return source.relative_to(definitions_dir)

    def portable(definitions: tuple[Definition, ...]) -> str:
        return repr([replace(d, source=relative(d.source)) for d in definitions])

    fingerprints = {}
    for job in jobs(plan):
        unit, definitions = unit_inputs(job)
        fingerprints[unit] = sha256(f"{tool}{unit}{portable(definitions)}".encode())
    everything = tuple(d for group in plan.groups for d in group.definitions)
    fingerprints[SHARED_UNIT] = sha256((tool + portable(everything)).encode())
    return fingerprints


def _read_lines(out_dir: Path, count: int) -> list[Any]:
    """The manifest's first ``count`` JSON lines; fewer (none) when it is missing or unreadable."""
    try:
        with (out_dir / MANIFEST).open(encoding="utf-8") as stream:
            return [json.loads(stream.readline()) for _ in range(count)]
    except (OSError, ValueError):
        return []


def _verified(out_dir: Path, files: Any) -> dict[str, str] | None:
    """The files a manifest entry lists, when every one is on disk exactly as written."""
    if not isinstance(files, dict):
        return None
    contents: dict[str, str] = {}
    for path, digest in files.items():
        try:
            data = (out_dir / path).read_bytes()
        except OSError:
            return None
        if sha256(data) != digest:
            return None
        contents[path] = data.decode()
    return contents


def unchanged_output(out_dir: Path, inputs: str) -> dict[str, str] | None:
    """Every file of the last run, when its inputs were ``inputs`` and its files are untouched."""
    index = _read_lines(out_dir, 1)
    if not index or not isinstance(index[0], dict) or index[0].get("inputs") != inputs:
        return None
    files: dict[str, str] = {}
    for entry in index[0].get("units", {}).values():
        contents = _verified(out_dir, entry.get("files"))
        if contents is None:
            return None
        files.update(contents)
    return files


def reusable_units(out_dir: Path, fingerprints: dict[str, str]) -> dict[str, Rendered]:
    """The units whose inputs are unchanged and whose files on disk are still exactly what was written."""
    lines = _read_lines(out_dir, 2)
    if len(lines) != 2 or not isinstance(lines[0], dict) or not isinstance(lines[1], dict):
        return {}
    index, openapi = lines
    reusable: dict[str, Rendered] = {}
    for unit, entry in index.get("units", {}).items():
        if fingerprints.get(unit) != entry.get("fingerprint"):
            continue
        contents = _verified(out_dir, entry.get("files"))
        if contents is not None:
            reusable[unit] = Rendered(contents, openapi.get(unit, {}))
    return reusable


def manifest_text(units: dict[str, Rendered], fingerprints: dict[str, str], inputs: str) -> str:
    """The two lines, unindented: the standard library writes megabytes of JSON fast only so."""
    index = {
        "generator": "apiforge",
        "inputs": inputs,
        "units": {
            unit: {
                "fingerprint": fingerprints[unit],
                "files": {path: sha256(text.encode()) for path, text in rendered.files.items()},
            }
            for unit, rendered in units.items()
        },
    }
    openapi = {unit: rendered.openapi for unit, rendered in units.items() if rendered.openapi}
    return json.dumps(index, sort_keys=True) + "\n" + json.dumps(openapi, sort_keys=True) + "\n"
