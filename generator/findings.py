"""Where the checks put what they find: each problem located at the line and field path the user wrote."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from generator.definition import Definition, DefinitionError, JsonPath

__all__ = ["Findings", "Locator"]


class Locator(Protocol):
    """Where a definition path of a loaded definition is in its file (``generator.sourcemap.SourceMap``)."""

    def locate(self, definition: Definition, path: JsonPath) -> tuple[int, str]:
        """(line, field path as written in the file)."""
        ...

    def format(self, definition: Definition) -> str:
        """The input format the definition was written in: "compact" or "crd"."""
        ...


class Findings:
    """The errors found so far, each located through the locator; identical ones are reported once."""

    def __init__(self, locate: Locator) -> None:
        self.locate = locate
        self.errors: list[DefinitionError] = []
        self._seen: set[tuple[str, int, str, str]] = set()

    def add(self, definition: Definition, path: JsonPath, message: str) -> None:
        line, shown = self.locate.locate(definition, path)
        key = (str(definition.source), line, shown, message)
        if key not in self._seen:
            self._seen.add(key)
            self.errors.append(DefinitionError(definition.source, line, shown, message))

    def reporter(
        self, definition: Definition, prefix: JsonPath = ()
    ) -> Callable[[JsonPath, str], None]:
        return lambda path, message: self.add(definition, (*prefix, *path), message)

    def where(self, definition: Definition, path: JsonPath) -> str:
        return f"{definition.source}:{self.locate.locate(definition, path)[0]}"
