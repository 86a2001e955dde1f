"""Stage 1 of the compiler: read ``definitions/**/*.yaml`` into normalized Definitions, with their locations.

Each document is either an unmodified ``apiextensions.k8s.io/v1`` CustomResourceDefinition (``load_crd``) or
apiforge's compact format (``load_compact``); both produce the same ``Definition`` shape. Loading never stops
at the first mistake: every error of every file is collected and raised together as ``DefinitionErrors``.

``load`` also returns a ``SourceMap``: later stages (check, plan, emit) report problems in a definition by a
path in the Definition's own vocabulary and the map turns it into the file, line and field path the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.check import check_definitions
from generator.definition import Definition, DefinitionError, DefinitionErrors
from generator.inputs import builtin_definitions, definition_files
from generator.load_compact import load_compact
from generator.load_crd import CRD_API_VERSION, load_crd
from generator.load_reader import DocumentReader, describe
from generator.sourcemap import DefinitionSource, SourceMap
from generator.yamlsource import YamlDocument, read_documents, read_file

__all__ = [
    "Loaded",
    "builtin_definitions",
    "definition_files",
    "load",
    "load_checked",
    "load_definitions",
    "load_documents",
    "load_text",
]

_CRD_KIND = "CustomResourceDefinition"


@dataclass(frozen=True)
class Loaded:
    """Every definition found, in file order, and where each of its parts came from."""

    definitions: list[Definition]
    sources: SourceMap


def _load_document(
    document: YamlDocument,
) -> tuple[Definition | None, DefinitionSource, list[DefinitionError]]:
    value = document.value
    if isinstance(value, dict):
        api_version, kind = value.get("apiVersion"), value.get("kind")
        if api_version == CRD_API_VERSION and kind == _CRD_KIND:
            definition, source, reader = load_crd(document)
            return definition, source, reader.errors
        # a compact definition may define the CustomResourceDefinition kind itself (builtin/definitions)
        if api_version is None and (kind != _CRD_KIND or "spec" not in value):
            definition, source, reader = load_compact(document)
            return definition, source, reader.errors
    reader = DocumentReader(document)
    if not isinstance(value, dict):
        reader.error((), f"expected a mapping (a definition), got {describe(value)}")
    elif value.get("apiVersion") == "apiextensions.k8s.io/v1beta1":
        reader.error(
            ("apiVersion",), "apiextensions.k8s.io/v1beta1 is not supported; convert the CRD to v1"
        )
    else:
        path = ("apiVersion",) if "apiVersion" in value else ("kind",)
        reader.error(
            path,
            f"unsupported apiVersion {describe(value.get('apiVersion'))} with kind {describe(value.get('kind'))}; "
            f"expected a compact definition (no apiVersion) or apiVersion: {CRD_API_VERSION} with kind: "
            f"{_CRD_KIND}",
        )
    return None, DefinitionSource(document, "compact"), reader.errors


def load_documents(documents: list[YamlDocument]) -> Loaded:
    """Load already-parsed documents; raises DefinitionErrors with every error found."""
    definitions: list[Definition] = []
    sources = SourceMap()
    errors: list[DefinitionError] = []
    for document in documents:
        definition, source, found = _load_document(document)
        errors.extend(sorted(found, key=DefinitionError.order))
        if definition is not None:
            definitions.append(definition)
            sources.add(definition, source)
    if errors:
        raise DefinitionErrors(errors)
    return Loaded(definitions, sources)


def load(directory: Path) -> Loaded:
    """Load the built-in definitions and every definition file under ``directory``; raises DefinitionErrors
    with every error of every file."""
    if not directory.is_dir():
        raise DefinitionErrors([DefinitionError(directory, 1, "", "no such definitions directory")])
    documents: list[YamlDocument] = []
    errors: list[DefinitionError] = []
    for file in [*definition_files(builtin_definitions()), *definition_files(directory)]:
        try:
            documents.extend(read_file(file))
        except DefinitionErrors as exc:
            errors.extend(exc.errors)
    try:
        loaded = load_documents(documents)
    except DefinitionErrors as exc:
        errors.extend(exc.errors)
    if errors:
        raise DefinitionErrors(sorted(errors, key=DefinitionError.order))
    return loaded


def load_text(text: str, file: Path = Path("<string>")) -> Loaded:
    """Load the definitions of one YAML text (tests, ``apiforge new``'s self-check)."""
    return load_documents(read_documents(file, text))


def load_definitions(directory: Path) -> list[Definition]:
    """The definitions under ``directory``, unchecked (see ``load_checked``)."""
    return load(directory).definitions


def load_checked(directory: Path) -> list[Definition]:
    """Load and check: what ``apiforge generate`` feeds to ``plan``. Raises DefinitionErrors."""
    loaded = load(directory)
    check_definitions(loaded.definitions, loaded.sources)
    return loaded.definitions
