"""Typed, strict reading of one YAML document: every wrong type, unknown key or missing key becomes an error.

Both input formats read their documents through a ``DocumentReader``, which records errors instead of raising,
so that one run reports every mistake in every file (a user fixes them in one pass) and each error names its
file, line and field path and says what was expected.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Iterable
from typing import Any

from generator.definition import DefinitionError, JsonPath
from generator.yamlsource import YamlDocument, format_path

__all__ = ["DocumentReader", "describe", "did_you_mean"]


def describe(value: Any) -> str:
    """A value as an error message shows it: JSON for scalars, the shape for collections."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return json.dumps(value)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """The closest candidate to a misspelt ``word`` (difflib), or "" when nothing is close."""
    options = list(candidates)
    lowered = {c.lower(): c for c in options}
    if word.lower() in lowered:
        return lowered[word.lower()]
    matches = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return matches[0] if matches else ""


class DocumentReader:
    """Reads one document's values by field path, collecting DefinitionErrors with exact lines."""

    def __init__(self, document: YamlDocument) -> None:
        self.document = document
        self.errors: list[DefinitionError] = []

    def error(self, path: JsonPath, message: str, cause: JsonPath | None = None) -> None:
        """Report ``message`` at ``path``; ``cause`` is where the error that explains this one is (it is
        listed first)."""
        lines = self.document.lines
        self.errors.append(
            DefinitionError(
                self.document.file,
                lines.line(path),
                format_path(path),
                message,
                cause_line=None if cause is None else lines.line(cause),
            )
        )

    def mapping(
        self,
        value: Any,
        path: JsonPath,
        allowed: Collection[str] | None = None,
        required: Iterable[str] = (),
    ) -> dict[str, Any] | None:
        """``value`` if it is a mapping, checking its keys against ``allowed`` (None: any key)."""
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {describe(value)}")
            return None
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    self.unknown_key((*path, key), key, allowed)
        for key in required:
            if value.get(key) is None:
                self.error((*path, key), "required key is missing")
        return value

    def unknown_key(self, path: JsonPath, key: str, allowed: Iterable[str]) -> None:
        options = sorted(allowed)
        if not options:
            self.error(path, f'unknown key "{key}"; this mapping takes no keys (write {{}})')
            return
        suggestion = did_you_mean(key, options)
        if suggestion:
            self.error(path, f'unknown key "{key}"; did you mean "{suggestion}"?')
        else:
            self.error(path, f'unknown key "{key}"; expected one of {", ".join(options)}')

    def string(self, value: Any, path: JsonPath) -> str | None:
        if isinstance(value, str):
            return value
        self.error(path, f"expected a string, got {describe(value)}")
        return None

    def boolean(self, value: Any, path: JsonPath) -> bool | None:
        if isinstance(value, bool):
            return value
        self.error(path, f"expected true or false, got {describe(value)}")
        return None

    def integer(self, value: Any, path: JsonPath) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        self.error(path, f"expected an integer, got {describe(value)}")
        return None

    def choice(self, value: Any, path: JsonPath, choices: Iterable[str]) -> str | None:
        options = list(choices)
        if isinstance(value, str) and value in options:
            return value
        hint = did_you_mean(value, options) if isinstance(value, str) else ""
        message = f"expected one of {', '.join(options)}, got {describe(value)}"
        self.error(path, f'{message}; did you mean "{hint}"?' if hint else message)
        return None

    def sequence(self, value: Any, path: JsonPath) -> list[Any] | None:
        if isinstance(value, list):
            return value
        self.error(path, f"expected a list, got {describe(value)}")
        return None

    def strings(self, value: Any, path: JsonPath) -> tuple[str, ...]:
        """A list of strings; wrong items are reported and left out."""
        items = self.sequence(value, path)
        if items is None:
            return ()
        out = []
        for index, item in enumerate(items):
            text = self.string(item, (*path, index))
            if text is not None:
                out.append(text)
        return tuple(out)

    # Optional keys of a mapping: absent or null gives ``default``; a wrong type is reported and gives it too.

    def opt_string(
        self, mapping: dict[str, Any], key: str, path: JsonPath, default: str = ""
    ) -> str:
        value = mapping.get(key)
        if value is None:
            return default
        text = self.string(value, (*path, key))
        return default if text is None else text

    def opt_bool(self, mapping: dict[str, Any], key: str, path: JsonPath, default: bool) -> bool:
        value = mapping.get(key)
        if value is None:
            return default
        flag = self.boolean(value, (*path, key))
        return default if flag is None else flag

    def opt_int(self, mapping: dict[str, Any], key: str, path: JsonPath, default: int) -> int:
        value = mapping.get(key)
        if value is None:
            return default
        number = self.integer(value, (*path, key))
        return default if number is None else number

    def opt_strings(self, mapping: dict[str, Any], key: str, path: JsonPath) -> tuple[str, ...]:
        value = mapping.get(key)
        return () if value is None else self.strings(value, (*path, key))
