"""Loading of apiforge's compact definition format (a definition file without ``apiVersion``).

The compact format says the same as a CRD with much less: derived names, shared subresources / printer
columns across versions, versions as an ordered mapping, short type expressions for schemas (expanded by
``schema_shorthand``) and declared field moves for conversion. The reference is docs/definitions.md.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from generator.definition import (
    Conversion,
    CreateSubresource,
    Definition,
    FieldMove,
    JsonPath,
    PrinterColumn,
    ScaleSubresource,
    ServerParts,
    StoredAs,
    Version,
)
from generator.load_crd import SCOPES, read_printer_columns, read_scale
from generator.load_hooks import read_admission_hooks
from generator.load_reader import DocumentReader
from generator.schema_shorthand import SchemaExpander
from generator.sourcemap import DefinitionSource
from generator.yamlsource import YamlDocument

__all__ = ["COMPACT_KEYS", "VERSION_KEYS", "load_compact", "plural_of"]

COMPACT_KEYS = (
    "group",
    "kind",
    "plural",
    "singular",
    "listKind",
    "shortNames",
    "categories",
    "scope",
    "description",
    "subresources",
    "printerColumns",
    "selectableFields",
    "versions",
    "builtin",
    "stored",
    "verbs",
    "strategy",
    "admission",
    "controllers",
    "authenticators",
    "standalone",
    "createSubresources",
    "openapiTypes",
    "goTypes",
    "admissionHooks",
    "storedAs",
)
VERSION_KEYS = (
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "schema",
    "subresources",
    "printerColumns",
    "selectableFields",
    "conversion",
)
_SUBRESOURCE_KEYS = ("status", "scale")
_CONVERSION_KEYS = ("rename", "toHub", "fromHub")
_CREATE_SUBRESOURCE_KEYS = ("apiVersion", "kind", "handler")
_STORED_AS_KEYS = ("group", "version", "resource")
_FIELD_PATH = re.compile(r"^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$")
_SHARED = ("subresources", "printerColumns", "selectableFields")


def plural_of(singular: str) -> str:
    """English plural of a lowercase singular: policy → policies, box → boxes, crontab → crontabs."""
    if re.search(r"[^aeiou]y$", singular):
        return singular[:-1] + "ies"
    if singular.endswith(("s", "x", "z", "ch", "sh")):
        return singular + "es"
    return singular + "s"


Subresources = tuple[bool, ScaleSubresource | None]


class _CompactLoader:
    """State of loading one compact document: the reader (errors), the source (locations) and shared parts."""

    def __init__(self, document: YamlDocument) -> None:
        self.reader = DocumentReader(document)
        self.source = DefinitionSource(document, "compact")

    def load(self) -> Definition | None:
        reader = self.reader
        top = reader.mapping(
            self.reader.document.value, (), COMPACT_KEYS, ("group", "kind", "versions")
        )
        if top is None:
            return None
        group = reader.opt_string(top, "group", ())
        kind = reader.opt_string(top, "kind", ())
        names = self._names(top, kind)
        scope = "Namespaced"
        if top.get("scope") is not None:
            scope = reader.choice(top["scope"], ("scope",), SCOPES) or scope
        else:
            self.source.record(("scope",), ())
        description = reader.opt_string(top, "description", ())
        shared = {
            "subresources": self._subresources(top.get("subresources"), ("subresources",)),
            "printerColumns": read_printer_columns(
                reader, top.get("printerColumns", []), ("printerColumns",), compact=True
            ),
            "selectableFields": reader.opt_strings(top, "selectableFields", ()),
        }
        short_names = reader.opt_strings(top, "shortNames", ())
        categories = reader.opt_strings(top, "categories", ())
        versions = self._versions(top.get("versions"), description, shared)
        hooks = read_admission_hooks(
            reader, top.get("admissionHooks"), "" if group == "core" else group, names["plural"]
        )
        if reader.errors or not kind:
            return None
        return Definition(
            source=reader.document.file,
            group="" if group == "core" else group,
            kind=kind,
            plural=names["plural"],
            singular=names["singular"],
            list_kind=names["listKind"],
            scope=scope,  # type: ignore[arg-type]  # checked against SCOPES
            versions=tuple(versions),
            short_names=short_names,
            categories=categories,
            server=replace(self._server_parts(top), admission_hooks=hooks),
        )

    def _server_parts(self, top: dict[str, Any]) -> ServerParts:
        reader = self.reader
        return ServerParts(
            builtin=reader.opt_bool(top, "builtin", (), False),
            stored=reader.opt_bool(top, "stored", (), True),
            verbs=reader.opt_strings(top, "verbs", ()),
            strategy=reader.opt_string(top, "strategy", ()),
            admission=reader.opt_strings(top, "admission", ()),
            controllers=reader.opt_strings(top, "controllers", ()),
            authenticators=reader.opt_strings(top, "authenticators", ()),
            standalone=reader.opt_bool(top, "standalone", (), True),
            create_subresources=self._create_subresources(top.get("createSubresources")),
            openapi_types=self._named_types(top.get("openapiTypes"), "openapiTypes"),
            go_types=self._named_types(top.get("goTypes"), "goTypes"),
            stored_as=self._stored_as(top.get("storedAs")),
        )

    def _stored_as(self, value: Any) -> StoredAs | None:
        """``storedAs: {group: core, version: v1, resource: events}``."""
        if value is None:
            return None
        path: JsonPath = ("storedAs",)
        fields = self.reader.mapping(value, path, _STORED_AS_KEYS, _STORED_AS_KEYS)
        if fields is None:
            return None
        group = self.reader.opt_string(fields, "group", path)
        return StoredAs(
            "" if group == "core" else group,
            self.reader.opt_string(fields, "version", path),
            self.reader.opt_string(fields, "resource", path),
        )

    def _named_types(self, value: Any, key: str) -> tuple[tuple[str, str], ...]:
        """``openapiTypes: {spec.ports[]: ServicePort}``, ``goTypes: {spec.type: ServiceType}``: field paths
        and the names of their types."""
        path: JsonPath = (key,)
        found = (self.reader.mapping(value, path, None) if value is not None else None) or {}
        return tuple((str(key), self.reader.opt_string(found, str(key), path)) for key in found)

    def _create_subresources(self, value: Any) -> tuple[CreateSubresource, ...]:
        """``createSubresources: {token: {apiVersion: authentication.k8s.io/v1, kind: TokenRequest,
        handler: module:Class}}``."""
        reader = self.reader
        path: JsonPath = ("createSubresources",)
        found = reader.mapping(value, path, None) if value is not None else None
        subresources = []
        for name, entry in (found or {}).items():
            here = (*path, name)
            fields = reader.mapping(entry, here, _CREATE_SUBRESOURCE_KEYS, _CREATE_SUBRESOURCE_KEYS)
            if fields is None:
                continue
            api_version = reader.opt_string(fields, "apiVersion", here)
            group, _, version = api_version.rpartition("/")
            subresources.append(
                CreateSubresource(
                    str(name),
                    group,
                    version,
                    reader.opt_string(fields, "kind", here),
                    reader.opt_string(fields, "handler", here),
                )
            )
        return tuple(subresources)

    def _names(self, top: dict[str, Any], kind: str) -> dict[str, str]:
        """plural / singular / listKind, derived from kind when omitted (and located at what they came from)."""
        reader = self.reader
        singular = reader.opt_string(top, "singular", (), kind.lower())
        plural = reader.opt_string(top, "plural", (), plural_of(singular))
        list_kind = reader.opt_string(top, "listKind", (), f"{kind}List")
        origin = {
            "singular": "kind",
            "plural": "singular" if "singular" in top else "kind",
            "listKind": "kind",
        }
        for key, derived_from in origin.items():
            if top.get(key) is None:
                self.source.record((key,), (derived_from,))
        return {"singular": singular, "plural": plural, "listKind": list_kind}

    def _subresources(self, value: Any, path: JsonPath) -> Subresources:
        if value is None:
            return False, None
        found = self.reader.mapping(value, path, _SUBRESOURCE_KEYS) or {}
        status = False
        if found.get("status") is not None:
            flag = found["status"]
            if isinstance(flag, dict):
                status = self.reader.mapping(flag, (*path, "status"), ()) is not None
            else:
                status = bool(self.reader.boolean(flag, (*path, "status")))
        scale = None
        if found.get("scale") is not None:
            scale = read_scale(self.reader, found["scale"], (*path, "scale"))
        return status, scale

    def _versions(self, value: Any, description: str, shared: dict[str, Any]) -> list[Version]:
        path = ("versions",)
        entries = self.reader.mapping(value, path)
        if entries is None:
            return []
        if not entries:
            self.reader.error(path, "expected at least one version")
        versions = []
        for name, entry in entries.items():
            version = self._version(name, entry, len(entries) == 1, description, shared)
            if version is not None:
                versions.append(version)
        return versions

    def _version(
        self, name: str, value: Any, only: bool, description: str, shared: dict[str, Any]
    ) -> Version | None:
        reader, here = self.reader, ("versions", name)
        entry = reader.mapping(value, here, VERSION_KEYS, required=("schema",))
        if entry is None:
            return None
        for key in _SHARED:
            if entry.get(key) is None:  # inherited from the top level: errors point there
                self.source.record((*here, key), (key,))
        if entry.get("storage") is None:
            self.source.record((*here, "storage"), here)

        def record(schema_path: JsonPath, file_path: JsonPath) -> None:
            self.source.record((*here, "schema", *schema_path), file_path)

        if entry.get("schema") is None:  # reported as missing
            return None
        expander = SchemaExpander(reader, record)
        schema = expander.root(entry["schema"], (*here, "schema"), description)
        status, scale = shared["subresources"]
        if entry.get("subresources") is not None:
            status, scale = self._subresources(entry["subresources"], (*here, "subresources"))
        columns: tuple[PrinterColumn, ...] = shared["printerColumns"]
        if entry.get("printerColumns") is not None:
            columns = read_printer_columns(
                reader, entry["printerColumns"], (*here, "printerColumns"), compact=True
            )
        selectable: tuple[str, ...] = shared["selectableFields"]
        if entry.get("selectableFields") is not None:
            selectable = reader.opt_strings(entry, "selectableFields", here)
        return Version(
            name=name,
            served=reader.opt_bool(entry, "served", here, True),
            storage=reader.opt_bool(entry, "storage", here, only),
            schema=schema,
            deprecated=reader.opt_bool(entry, "deprecated", here, False),
            deprecation_warning=reader.opt_string(entry, "deprecationWarning", here),
            status_subresource=status,
            scale_subresource=scale,
            printer_columns=columns,
            selectable_fields=selectable,
            conversion=self._conversion(entry.get("conversion"), (*here, "conversion")),
            protobuf=expander.protobuf,
        )

    def _conversion(self, value: Any, path: JsonPath) -> Conversion:
        if value is None:
            return Conversion()
        stanza = self.reader.mapping(value, path, _CONVERSION_KEYS) or {}
        moves = []
        if stanza.get("rename") is not None:
            renames = self.reader.mapping(stanza["rename"], (*path, "rename")) or {}
            for version_path, hub_path in renames.items():
                here = (*path, "rename", version_path)
                source = self._field_path(version_path, here)
                target = self._field_path(hub_path, here)
                if source and target:
                    self.source.record((*path, "rename", ".".join(source)), here)
                    moves.append(FieldMove(source, target))
        return Conversion(
            moves=tuple(moves),
            to_hub_hook=self.reader.opt_string(stanza, "toHub", path),
            from_hub_hook=self.reader.opt_string(stanza, "fromHub", path),
        )

    def _field_path(self, value: Any, path: JsonPath) -> tuple[str, ...]:
        text = self.reader.string(value, path)
        if text is None:
            return ()
        dotted = text[1:] if text.startswith(".") else text
        if not _FIELD_PATH.match(dotted):
            self.reader.error(
                path, f'expected a dotted field path such as "spec.schedule", got "{text}"'
            )
            return ()
        return tuple(dotted.split("."))


def load_compact(
    document: YamlDocument,
) -> tuple[Definition | None, DefinitionSource, DocumentReader]:
    """One compact document → its Definition (None when it has errors)."""
    loader = _CompactLoader(document)
    return loader.load(), loader.source, loader.reader
