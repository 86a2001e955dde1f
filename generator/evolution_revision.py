"""One revision of a project's definitions for `apiforge check`: the definitions, where each part was written,
and how to name a file of the revision to the user. A revision is read from a directory, from a git ref
(``git show REF:definitions/...``, nothing checked out) or from CustomResourceDefinitions a server returned."""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.definition import Definition, DefinitionError, DefinitionErrors, JsonPath
from generator.inputs import definition_files
from generator.load import load_documents
from generator.sourcemap import SourceMap
from generator.yamlsource import read_documents, read_file

__all__ = ["Revision", "from_crds", "from_directory", "from_git"]


@dataclass(frozen=True)
class Revision:
    """The project's own definitions of one revision (the built-in kinds every server has are left out)."""

    label: str
    definitions: tuple[Definition, ...]
    sources: SourceMap
    root: Path
    """The directory the definitions were read from (a temporary copy for a git ref)."""
    shown_root: str
    """How that directory is named to the user: ``definitions`` or ``main:definitions``."""

    def shown_path(self, file: Path) -> str:
        """A file of the revision as the user knows it (``main:definitions/crontab.yaml``)."""
        relative = file.resolve().relative_to(self.root.resolve()).as_posix()
        return f"{self.shown_root}/{relative}"

    def locate(self, definition: Definition, path: JsonPath) -> tuple[str, int]:
        """(file as shown, line) of a definition path, or of its longest part that exists."""
        return self.shown_path(definition.source), self.sources.locate(definition, path)[0]

    def find(self, group: str, kind: str) -> Definition | None:
        return next((d for d in self.definitions if (d.group, d.kind) == (group, kind)), None)


def _project(directory: Path, label: str, shown_root: str) -> Revision:
    """The definitions of the files under ``directory`` alone (not the built-in kinds every server has)."""
    if not directory.is_dir():
        raise DefinitionErrors([DefinitionError(directory, 1, "", "no such definitions directory")])
    documents = [document for file in definition_files(directory) for document in read_file(file)]
    loaded = load_documents(documents)
    return Revision(label, tuple(loaded.definitions), loaded.sources, directory, shown_root)


def from_directory(directory: Path) -> Revision:
    """The definitions under ``directory``, unchecked: `apiforge check` reports what the checks find itself."""
    return _project(directory, str(directory), str(directory))


def from_git(ref: str, definitions_dir: Path, into: Path) -> Revision:
    """The definitions ``definitions_dir`` held at ``ref`` of its git repository, written under ``into``."""
    directory = definitions_dir.resolve()
    top = Path(_git(directory, "rev-parse", "--show-toplevel").strip())
    relative = directory.relative_to(top).as_posix()
    listed = _git(top, "ls-tree", "-r", "--name-only", ref, "--", relative).splitlines()
    for name in listed:
        target = into / Path(name).relative_to(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git_bytes(top, "show", f"{ref}:{name}"))
    into.mkdir(parents=True, exist_ok=True)
    return _project(into, ref, f"{ref}:{relative}")


def from_crds(crds: list[dict[str, Any]], label: str) -> Revision:
    """The CustomResourceDefinitions a server returned (their status and server-set metadata dropped), each
    read as if it were a file ``<label>/<name>.yaml``."""
    root = Path(tempfile.gettempdir()) / "apiforge-check-server"
    documents = []
    for crd in crds:
        manifest = {
            "apiVersion": crd["apiVersion"],
            "kind": crd["kind"],
            "metadata": {"name": crd["metadata"]["name"]},
            "spec": crd["spec"],
        }
        text = yaml.safe_dump(manifest, sort_keys=False)
        documents.extend(read_documents(root / f"{crd['metadata']['name']}.yaml", text))
    loaded = load_documents(documents)
    return Revision(label, tuple(loaded.definitions), loaded.sources, root, label)


def _git_bytes(cwd: Path, *args: str) -> bytes:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise DefinitionErrors([DefinitionError(cwd, 1, "", f"git {' '.join(args)}: {message}")])
    return result.stdout


def _git(cwd: Path, *args: str) -> str:
    return _git_bytes(cwd, *args).decode()
