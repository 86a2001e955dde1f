"""`apiforge docs`: the API reference of a project's definitions, as pages of plain blocks (headings,
paragraphs, tables, code) that :mod:`generator.reference_render` writes as Markdown and as one HTML page.

A page per group: each kind with its scope, names, and per version its status (served, storage,
deprecated), printer columns, every field (type, required, default, validation, CEL rules, description) and an
example object. Everything is sorted, so the same definitions always give the same bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import yaml

from generator.definition import Definition, Version
from generator.reference_example import example_object

__all__ = ["Code", "Heading", "Page", "Paragraph", "Table", "group_pages"]

_BOUNDS: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Code:
    language: str
    text: str


Block = Heading | Paragraph | Table | Code


@dataclass(frozen=True)
class Page:
    """One group's reference: written as ``<name>.md`` and as a section of the HTML page."""

    name: str
    title: str
    blocks: tuple[Block, ...]


def _anchor(*parts: str) -> str:
    return "-".join(part.lower().replace(".", "-").replace("/", "-") for part in parts if part)


def _type(node: dict[str, Any]) -> str:
    if node.get("x-kubernetes-int-or-string") is True:
        return "int-or-string"
    kind = node.get("type")
    if kind == "array" and isinstance(node.get("items"), dict):
        return f"[]{_type(node['items'])}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map[string]{_type(node['additionalProperties'])}"
    if kind is None:
        return "any"
    return f"{kind} ({node['format']})" if node.get("format") else str(kind)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _shown(value: Any) -> str:
    """A keyword's value as written in a definition: a string bare (a pattern's backslashes single)."""
    return value if isinstance(value, str) else _json(value)


def _validation(node: dict[str, Any]) -> str:
    parts = [f"{key}: {_shown(node[key])}" for key in _BOUNDS if key in node]
    if "enum" in node:
        parts.append(f"enum: {', '.join(_json(v) for v in node['enum'])}")
    for rule in node.get("x-kubernetes-validations", ()):
        text = f"rule: {rule.get('rule', '')}"
        if rule.get("message"):
            text += f" ({rule['message']})"
        parts.append(text)
    return "; ".join(parts)


def _fields(node: dict[str, Any], path: str, required: bool) -> Iterator[tuple[str, ...]]:
    if path:
        default = _json(node["default"]) if "default" in node else ""
        description = " ".join(str(node.get("description", "")).split())
        yield (
            path,
            _type(node),
            "yes" if required else "",
            default,
            _validation(node),
            description,
        )
    needed = node.get("required", ())
    for name, child in sorted((node.get("properties") or {}).items()):
        if isinstance(child, dict) and not (
            not path and name in ("apiVersion", "kind", "metadata")
        ):
            yield from _fields(child, f"{path}.{name}" if path else name, name in needed)
    for key, suffix in (("items", "[]"), ("additionalProperties", "[*]")):
        child = node.get(key)
        if isinstance(child, dict) and (
            child.get("properties") or child.get("x-kubernetes-validations")
        ):
            yield from _fields(child, f"{path}{suffix}", False)


def _version(definition: Definition, version: Version) -> Iterator[Block]:
    anchor = _anchor(definition.kind, definition.group, version.name)
    yield Heading(3, f"{definition.kind} {version.name}", anchor)
    status = [
        "storage version" if version.storage else "",
        "served" if version.served else "not served",
        "deprecated" if version.deprecated else "",
    ]
    text = f"`apiVersion: {definition.group}/{version.name}`: {', '.join(s for s in status if s)}."
    if version.deprecation_warning:
        text += f" Deprecation warning: {version.deprecation_warning}"
    yield Paragraph(text)
    description = version.schema.get("description")
    if description:
        yield Paragraph(" ".join(str(description).split()))
    columns = [
        (c.name, c.type, c.json_path or f"computed ({c.cell})", str(c.priority), c.description)
        for c in version.printer_columns
    ]
    if columns:
        yield Paragraph("Printer columns (`kubectl get`; priority above 0 only with `-o wide`):")
        yield Table(("Column", "Type", "JSONPath", "Priority", "Description"), tuple(columns))
    yield Paragraph("Fields:")
    yield Table(
        ("Field", "Type", "Required", "Default", "Validation", "Description"),
        tuple(_fields(version.schema, "", False)),
    )
    yield Paragraph("Example (a minimal object):")
    example = yaml.safe_dump(example_object(definition, version), sort_keys=False)
    yield Code("yaml", example)


def _kind(definition: Definition) -> Iterator[Block]:
    yield Heading(2, definition.kind, _anchor(definition.kind, definition.group))
    names = [
        f"scope {definition.scope}",
        f"resource `{definition.plural}`",
        f"list kind `{definition.list_kind}`",
    ]
    if definition.short_names:
        names.append(f"short names {', '.join(f'`{n}`' for n in definition.short_names)}")
    if definition.categories:
        names.append(f"categories {', '.join(f'`{c}`' for c in definition.categories)}")
    served = ", ".join(v.name for v in definition.versions)
    yield Paragraph(f"{'; '.join(names)}. Versions: {served}.")
    for version in definition.versions:
        yield from _version(definition, version)


def group_pages(definitions: list[Definition]) -> list[Page]:
    """A page per API group of ``definitions``, by group; kinds by name within it."""
    groups: dict[str, list[Definition]] = {}
    for definition in definitions:
        groups.setdefault(definition.group or "core", []).append(definition)
    pages = []
    for group in sorted(groups):
        blocks: list[Block] = [Heading(1, group, _anchor(group))]
        for definition in sorted(groups[group], key=lambda d: d.kind):
            blocks.extend(_kind(definition))
        pages.append(Page(group, group, tuple(blocks)))
    return pages
