"""What generated output depends on besides the definitions: the generator's sources and templates, and the
versions of the tools whose output is committed. Light (standard library only): the no-op path hashes it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from importlib import metadata, resources
from importlib.resources.abc import Traversable

__all__ = ["VERSIONED", "package_digest", "tool_fingerprint"]

# The distributions whose version changes the output: apiforge itself (an installed generator's sources may
# not be what importlib.resources finds), and the tools that write generated code (models, formatting).
VERSIONED = ("apiforge", "datamodel-code-generator", "ruff")


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


def package_digest(package: str) -> str:
    """A digest of every file of ``package`` (a dotted name), by path and bytes."""
    digest = hashlib.sha256()
    for name, data in _package_files(resources.files(package), package):
        digest.update(name.encode())
        digest.update(data)
    return digest.hexdigest()


def tool_fingerprint() -> str:
    """Compiler sources, templates, tool versions."""
    digest = hashlib.sha256(package_digest("generator").encode())
    for distribution in VERSIONED:
        digest.update(f"{distribution}={_version(distribution)}".encode())
    return digest.hexdigest()
