"""YAML documents with a line number for every field path, so that every definition error can name its line.

PyYAML's ``safe_load`` throws positions away and silently keeps the last of two duplicate keys, so this module
composes the node graph itself (libyaml's ``CSafeLoader`` when available, the pure-Python ``SafeLoader``
otherwise) and builds plain Python values from it while recording, for each mapping key and sequence item, the
line it starts on. Values are JSON-like: YAML timestamps stay strings (as Kubernetes reads them), keys must be
strings, and a duplicate key is an error rather than an override.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from apiserver.encoding.kubeyaml import go_yaml_resolvers
from generator.definition import DefinitionError, DefinitionErrors, JsonPath

__all__ = [
    "LOADER",
    "PURE_PYTHON_LOADER",
    "LineIndex",
    "YamlDocument",
    "format_path",
    "read_documents",
    "read_file",
]

_MERGE = "tag:yaml.org,2002:merge"

PURE_PYTHON_LOADER = go_yaml_resolvers(yaml.SafeLoader)
LOADER = go_yaml_resolvers(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
"""libyaml's loader (5x faster) when PyYAML was built with it, else the pure-Python one."""

_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_$@/-]+$")


def format_path(path: JsonPath) -> str:
    """Render a field path for humans: ``versions.v1.schema.spec``, ``spec.versions[0].name``.

    Keys that would be ambiguous in dotted form (a dot, a space, a bracket) are quoted: ``rename["spec.a"]``.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _SIMPLE_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


@dataclass(frozen=True)
class LineIndex:
    """Field path → 1-based line of one YAML document, for keys and list items."""

    lines: dict[JsonPath, int]

    def existing_prefix(self, path: JsonPath) -> JsonPath:
        """The longest prefix of ``path`` present in the document (at worst the document root ``()``)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return path[:end]
        return ()

    def line(self, path: JsonPath) -> int:
        """The line of ``path``, or of its nearest present ancestor when it is absent (a missing key)."""
        return self.lines.get(self.existing_prefix(path), 1)

    def __contains__(self, path: object) -> bool:
        return path in self.lines


@dataclass(frozen=True)
class YamlDocument:
    """One ``---`` document of a file: its value and where each of its fields is."""

    file: Path
    value: Any
    lines: LineIndex


class _Builder:
    """Turns one composed node graph into plain values, recording lines and collecting duplicate-key errors."""

    def __init__(self, file: Path, loader: yaml.SafeLoader) -> None:
        self.file = file
        self.loader = loader
        self.lines: dict[JsonPath, int] = {}
        self.errors: list[DefinitionError] = []
        self._active: set[int] = (
            set()
        )  # nodes on the current path: a recursive alias would never end

    def error(self, node: yaml.Node, path: JsonPath, message: str) -> None:
        self.errors.append(
            DefinitionError(self.file, node.start_mark.line + 1, format_path(path), message)
        )

    def build(self, node: yaml.Node, path: JsonPath) -> Any:
        if id(node) in self._active:
            self.error(node, path, "recursive YAML alias")
            return None
        self._active.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            if isinstance(node, yaml.SequenceNode):
                return self._sequence(node, path)
            return self._scalar(node, path)
        finally:
            self._active.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: JsonPath) -> dict[str, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "a collection"
                self.error(key_node, path, f"mapping keys must be strings; quote the key {shown!r}")
            elif key in first_line:
                self.error(
                    key_node,
                    (*path, key),
                    f'duplicate key "{key}" (first given at line {first_line[key]})',
                )
            else:
                first_line[key] = line
        # Resolve `<<` merge keys the way PyYAML does: merged entries first, the mapping's own keys override.
        self.loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                continue
            child = (*path, key)
            self.lines[child] = key_node.start_mark.line + 1
            result[key] = self.build(value_node, child)
        return result

    def _sequence(self, node: yaml.SequenceNode, path: JsonPath) -> list[Any]:
        items = []
        for index, item in enumerate(node.value):
            child = (*path, index)
            self.lines[child] = item.start_mark.line + 1
            items.append(self.build(item, child))
        return items

    def _scalar(self, node: yaml.Node, path: JsonPath) -> Any:
        try:
            value = self.loader.construct_object(node)
        except yaml.YAMLError as exc:
            self.error(node, path, f"invalid YAML value: {exc}")
            return None
        if value is None or isinstance(value, str | bool | int | float):
            return value
        self.error(
            node, path, f"unsupported YAML value of type {type(value).__name__} (tag {node.tag})"
        )
        return None


def _documents(
    file: Path, text: str, loader_class: type[yaml.SafeLoader]
) -> Iterator[YamlDocument]:
    loader = loader_class(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            builder = _Builder(file, loader)
            builder.lines[()] = node.start_mark.line + 1
            value = builder.build(node, ())
            if builder.errors:
                raise DefinitionErrors(builder.errors)
            if value is not None:
                yield YamlDocument(file, value, LineIndex(builder.lines))
    finally:
        loader.dispose()


def read_documents(
    file: Path, text: str, loader_class: type[yaml.SafeLoader] = LOADER
) -> list[YamlDocument]:
    """Every non-empty document of ``text`` (read from ``file``); raises DefinitionErrors on invalid YAML."""
    try:
        return list(_documents(file, text, loader_class))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        raise DefinitionErrors(
            [DefinitionError(file, line, "", f"invalid YAML: {problem}")]
        ) from None
    except yaml.YAMLError as exc:
        raise DefinitionErrors([DefinitionError(file, 1, "", f"invalid YAML: {exc}")]) from None


def read_file(file: Path) -> list[YamlDocument]:
    """Read and parse one definition file."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionErrors([DefinitionError(file, 1, "", f"cannot read file: {exc}")]) from None
    return read_documents(file, text)
