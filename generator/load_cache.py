"""Loaded and checked definitions, kept per definition file in the build cache.

Loading (YAML with line marks, normalising both formats) and checking (structural schemas, defaults, CEL rules
and their cost) took 1.6 s of a 2.9 s run that adds one kind to 200, and the built-in definitions every project
loads grow with each built-in group. A file's definitions are a function of its path, its bytes and the code
that loads and checks them (the generator's sources and the runtime's schema, machinery and encoding packages
the checks call), so they are kept under a key of all of that: a run loads and checks only the files whose key
is new. The checks between definitions (``check_across``: names claimed twice, subresource kinds) run on every
run over all of them, in milliseconds, since a new file can break them.

When anything is wrong, the whole directory is loaded and checked again without the cache, so errors are
reported exactly as a cold run reports them: every error of every file, in file and line order.

The entries are pickled (``packed``: Definitions are frozen dataclasses holding plain JSON-like data).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from generator.check_across import across_problems
from generator.definition import Definition, DefinitionErrors
from generator.inputs import builtin_definitions, definition_files
from generator.packed import pack, unpack
from generator.sourcemap import SourceMap
from generator.toolprint import package_digest, tool_fingerprint

__all__ = ["BUILTIN", "Checked", "FileEntries", "checked_definitions"]

BUILTIN = Path("<builtin>")
# The runtime packages the checks call (schema validation, defaulting, CEL, JSONPath, YAML): a change there can
# change a check's verdict without changing the generator.
CHECKED_WITH = ("apiserver.schema", "apiserver.machinery", "apiserver.encoding")

FileEntry = tuple[tuple[Definition, ...], tuple[str, ...]]
"""A definition file's definitions and their digests."""
FileEntries = dict[str, str]
"""A definition file's key → its entry, encoded (``encode``). An entry reused is kept as it was read, so the
manifest of a run does not depend on which files it loaded (pickling what was unpickled need not give the
same bytes)."""


@dataclass(frozen=True)
class Checked:
    """The definitions of a run, each with the digest of its content (its source relative to the definitions
    directory, so a project's fingerprints do not depend on where it is checked out), and the entries to keep
    for the next run."""

    definitions: list[Definition]
    digests: dict[int, str]  # by id() of the definition; the list keeps each alive
    files: FileEntries

    def digest(self, definition: Definition) -> str:
        return self.digests[id(definition)]


def _portable(source: Path, definitions_dir: Path, builtin_dir: Path) -> Path:
    if source.is_relative_to(builtin_dir):
        return BUILTIN / source.relative_to(builtin_dir)
    return source.relative_to(definitions_dir)


def _digest(definition: Definition, source: Path) -> str:
    return hashlib.sha256(repr(replace(definition, source=source)).encode()).hexdigest()


def _loaded_file(file: Path, data: bytes, portable: Path) -> FileEntry | None:
    """One file loaded and checked alone, or None when it has an error (the caller reports them all)."""
    from generator.check import each_has_problems
    from generator.load import load_documents
    from generator.yamlsource import read_documents

    try:
        loaded = load_documents(read_documents(file, data.decode("utf-8")))
    except (DefinitionErrors, UnicodeDecodeError):
        return None
    if each_has_problems(loaded.definitions, loaded.sources):
        return None
    definitions = tuple(loaded.definitions)
    return definitions, tuple(_digest(d, portable) for d in definitions)


def _uncached(definitions_dir: Path) -> Checked:
    """Every file loaded and checked together (raises DefinitionErrors as a cold run does)."""
    from generator.load import load_checked

    definitions = load_checked(definitions_dir)
    builtin_dir = builtin_definitions()
    digests = {
        id(d): _digest(d, _portable(d.source, definitions_dir, builtin_dir)) for d in definitions
    }
    return Checked(definitions, digests, {})


def _entry(value: object) -> FileEntry | None:
    if isinstance(value, tuple) and len(value) == 2:
        return value
    return None


def checked_definitions(definitions_dir: Path, previous: FileEntries | None) -> Checked:
    """The built-in and project definitions, loaded and checked; ``previous`` is the last run's entries (None:
    use no cache, as ``--check`` does). Raises DefinitionErrors listing every problem."""
    if previous is None or not definitions_dir.is_dir():
        return _uncached(definitions_dir)
    fingerprint = tool_fingerprint() + "".join(map(package_digest, CHECKED_WITH))
    builtin_dir = builtin_definitions()
    entries: list[FileEntry] = []
    files: FileEntries = {}
    for directory in (builtin_dir, definitions_dir):
        for file in definition_files(directory):
            try:
                data = file.read_bytes()
            except OSError:
                return _uncached(definitions_dir)
            key = hashlib.sha256(f"{fingerprint}\0{file}\0".encode() + data).hexdigest()
            entry = _entry(unpack(previous.get(key)))
            if entry is None:
                entry = _loaded_file(file, data, _portable(file, definitions_dir, builtin_dir))
                if entry is None:
                    return _uncached(definitions_dir)
                files[key] = pack(entry)
            else:
                files[key] = previous[key]
            entries.append(entry)
    definitions = [d for found, _ in entries for d in found]
    if across_problems(definitions, SourceMap()):
        return _uncached(definitions_dir)
    digests = {
        id(d): digest
        for found, found_digests in entries
        for d, digest in zip(found, found_digests, strict=True)
    }
    return Checked(definitions, digests, files)
