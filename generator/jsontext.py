"""JSON documents written entry by entry, byte for byte as ``json.dumps(indent=1, sort_keys=True)`` writes them whole.

The aggregate OpenAPI documents (``openapi/aggregate.json`` and the Swagger ``swagger.json``) hold every path and
schema of every group-version: 18 MB at 200 kinds, which the standard library's indenting encoder (pure Python)
takes over a second to write. Written entry by entry instead, each group-version's entries are serialised once,
when that group-version is rendered, and kept in the build cache; an aggregate is then the sorted join of its
entries' texts, which costs milliseconds, and adding one kind serialises only that kind's group-version again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

Entries = dict[str, str]
"""One JSON object's members: key → the member's value as written at its depth."""


def dumps(value: Any) -> str:
    """The one JSON style of generated files: one-space indent, sorted keys, UTF-8 as is, final newline."""
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def entries(members: Mapping[str, Any], depth: int) -> Entries:
    """The members of the object at a section path of length ``depth`` (1 for "paths", 2 for
    "components"/"schemas"), each value written as ``dumps`` writes it there: JSON strings hold no raw
    newline, so indenting every line break indents exactly the value's lines."""
    pad = "\n" + " " * (depth + 1)
    return {
        key: json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).replace("\n", pad)
        for key, value in members.items()
    }


def merge(into: dict[str, Entries], section: str, new: Entries, origin: str) -> None:
    """Add ``new`` to ``into[section]``; the same key twice must carry the same value (the shared meta/v1
    schemas that every group-version document repeats), anything else is a generator bug."""
    existing = into.setdefault(section, {})
    for key, text in new.items():
        if existing.setdefault(key, text) != text:
            raise ValueError(f"{origin}: {section} entry {key!r} differs between group-versions")


def document(skeleton: Mapping[str, Any], sections: Mapping[tuple[str, ...], Entries]) -> str:
    """``dumps`` of ``skeleton`` with the object at each section path made of that section's entries."""
    placeholders: dict[str, tuple[str, ...]] = {}
    filled: dict[str, Any] = json.loads(json.dumps(skeleton))
    for path in sections:
        parent = filled
        for key in path[:-1]:
            parent = parent.setdefault(key, {})
        placeholder = f"\x00section {len(placeholders)}\x00"
        parent[path[-1]] = placeholder
        placeholders[json.dumps(placeholder, ensure_ascii=False)] = path
    text = dumps(filled)
    for placeholder, path in placeholders.items():
        text = text.replace(placeholder, _object(sections[path], len(path)), 1)
    return text


def _object(members: Entries, depth: int) -> str:
    if not members:
        return "{}"
    pad = " " * (depth + 1)
    body = ",\n".join(
        f"{pad}{json.dumps(key, ensure_ascii=False)}: {members[key]}" for key in sorted(members)
    )
    return "{\n" + body + "\n" + " " * depth + "}"
