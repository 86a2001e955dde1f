"""Where each part of a loaded Definition came from, so that errors found after loading still name file and line.

Stages after ``load`` only see normalized ``Definition`` values, in which a compact field spec and a CRD schema
look alike. They name what is wrong with a *definition path* in the Definition's own vocabulary (the compact
format's camelCase keys), and a ``SourceMap`` turns it into the file, line and field path the user wrote:

====================================================  ==========================================================
definition path                                       meaning
====================================================  ==========================================================
``("group",)``, ``("kind",)``, ``("plural",)``,       the names (derived ones point at what they derive from)
``("singular",)``, ``("listKind",)``, ``("scope",)``
``("shortNames", i)``, ``("categories", i)``          one short name / category
``("versions", "v1")``                                one version (``served``, ``storage``, ... below it)
``("versions", "v1", "schema", *p)``                  node ``p`` of that version's openAPIV3Schema dict, e.g.
                                                      ``("properties", "spec", "properties", "replicas")``
``("versions", "v1", "subresources", "scale", k)``    a scale path (``specReplicasPath`` ...)
``("versions", "v1", "printerColumns", i, k)``        printer column ``i`` (``jsonPath`` ...)
``("versions", "v1", "selectableFields", i)``         selectable field ``i``
``("versions", "v1", "conversion", k)``               ``("rename", "spec.a")``, ``("toHub",)``, ``("fromHub",)``
====================================================  ==========================================================

The loader records, per definition, a few *prefix* rewrites (definition path prefix → file path prefix); a path
is located by its longest recorded prefix with the rest appended unchanged, then by the longest part of that
file path that exists in the document (its line is the error's line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from generator.definition import Definition, DefinitionError, JsonPath
from generator.yamlsource import YamlDocument, format_path

__all__ = ["DefinitionSource", "Format", "SourceMap"]

Format = Literal["compact", "crd"]


@dataclass
class DefinitionSource:
    """One definition's document and the definition-path → file-path prefix rewrites the loader recorded."""

    document: YamlDocument
    format: Format
    rewrites: dict[JsonPath, JsonPath] = field(default_factory=dict)

    def record(self, definition_path: JsonPath, file_path: JsonPath) -> None:
        self.rewrites[definition_path] = file_path

    def file_path(self, path: JsonPath) -> JsonPath:
        """The file path of a definition path (unchanged when no prefix of it was rewritten)."""
        for end in range(len(path), -1, -1):
            target = self.rewrites.get(path[:end])
            if target is not None:
                return (*target, *path[end:])
        return path

    def locate(self, path: JsonPath) -> tuple[int, str]:
        """(line, field path as shown to the user) of a definition path.

        A CRD shows the full path even where it is absent from the file (``...properties.tags.items`` says what
        is missing); a compact definition shows the part that exists, since its short forms have no such keys.
        """
        target = self.file_path(path)
        existing = self.document.lines.existing_prefix(target)
        shown = target if self.format == "crd" else existing
        return self.document.lines.line(existing), format_path(shown)


class SourceMap:
    """The loader's hand-off to later stages: definition + definition path → file, line and field path.

    Keyed by the identity of the Definition objects the loader returned (they are frozen, so the same object
    travels through every stage); a definition the map does not know (built by hand, e.g. in a test) is
    reported at line 1 of its ``source`` with its definition path.
    """

    def __init__(self) -> None:
        self._sources: dict[int, tuple[Definition, DefinitionSource]] = {}

    def add(self, definition: Definition, source: DefinitionSource) -> None:
        # Holding the definition keeps its id() from being reused while the map lives.
        self._sources[id(definition)] = (definition, source)

    def source(self, definition: Definition) -> DefinitionSource | None:
        entry = self._sources.get(id(definition))
        return entry[1] if entry is not None and entry[0] is definition else None

    def format(self, definition: Definition) -> Format:
        """Which input format the definition was written in ("compact" when unknown)."""
        source = self.source(definition)
        return "compact" if source is None else source.format

    def locate(self, definition: Definition, path: JsonPath) -> tuple[int, str]:
        """(line, field path as the user wrote it) for a definition path."""
        source = self.source(definition)
        return (1, format_path(path)) if source is None else source.locate(path)

    def error(self, definition: Definition, path: JsonPath, message: str) -> DefinitionError:
        """A DefinitionError at the line and field path of a definition path."""
        line, shown = self.locate(definition, path)
        return DefinitionError(definition.source, line, shown, message)
