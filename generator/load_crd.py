"""Loading of unmodified ``apiextensions.k8s.io/v1`` CustomResourceDefinition manifests.

Users already have CRDs (kubebuilder, Helm charts), so apiforge reads them as they are. Every field the v1 API
defines is accepted (including metadata, status and ``preserveUnknownFields: false``); any other key is an
error, because a typo that the apiserver would silently drop is exactly the kind of mistake worth stopping.
Conversion webhooks are refused: apiforge converts in-process from declared field moves.
"""

from __future__ import annotations

from typing import Any

from apiserver.schema.webhookurl import webhook_url_causes
from generator.api_approval import ANNOTATION, approval_problem
from generator.definition import (
    Conversion,
    Definition,
    JsonPath,
    PrinterColumn,
    ScaleSubresource,
    Version,
)
from generator.load_reader import DocumentReader
from generator.schema_keywords import JSON_SCHEMA_PROPS, check_keyword_value
from generator.sourcemap import DefinitionSource
from generator.yamlsource import YamlDocument

__all__ = [
    "COLUMN_FORMATS",
    "COLUMN_TYPES",
    "CRD_API_VERSION",
    "check_schema_props",
    "load_crd",
    "read_printer_columns",
    "read_scale",
]

CRD_API_VERSION = "apiextensions.k8s.io/v1"
COLUMN_TYPES = ("string", "integer", "number", "boolean", "date")
COLUMN_FORMATS = ("int32", "int64", "float", "double", "byte", "date", "date-time", "password")
SCOPES = ("Namespaced", "Cluster")

_TOP_KEYS = ("apiVersion", "kind", "metadata", "spec", "status")
_OBJECT_META_KEYS = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
_STATUS_KEYS = ("conditions", "acceptedNames", "storedVersions")
_SPEC_KEYS = ("group", "names", "scope", "versions", "conversion", "preserveUnknownFields")
_NAMES_KEYS = ("plural", "singular", "shortNames", "kind", "listKind", "categories")
_VERSION_KEYS = (
    "name",
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "schema",
    "subresources",
    "additionalPrinterColumns",
    "selectableFields",
)
_SUBRESOURCE_KEYS = ("status", "scale")
_SCALE_KEYS = ("specReplicasPath", "statusReplicasPath", "labelSelectorPath")
_COLUMN_KEYS = ("name", "type", "format", "description", "priority", "jsonPath")
# The compact format adds a column computed by a function (`cell: package.module:name`) instead of a JSONPath,
# and the `name` format, which places the object's name (kube's events print it last); CRDs have neither.
_COMPACT_COLUMN_KEYS = (*_COLUMN_KEYS, "cell")
COMPACT_COLUMN_FORMATS = (*COLUMN_FORMATS, "name")
_CONVERSION_KEYS = ("strategy", "webhook")
_WEBHOOK_KEYS = ("clientConfig", "conversionReviewVersions")
_SERVICE_KEYS = ("namespace", "name", "path", "port")
_STRATEGY_NONE = Conversion(prune=True)
"""How the versions of a CRD without a conversion webhook convert (a webhook's CRD converts by calling it)."""


def read_scale(reader: DocumentReader, value: Any, path: JsonPath) -> ScaleSubresource | None:
    """A scale subresource (same shape in both formats)."""
    scale = reader.mapping(value, path, _SCALE_KEYS, required=_SCALE_KEYS[:2])
    if scale is None:
        return None
    return ScaleSubresource(
        spec_replicas_path=reader.opt_string(scale, "specReplicasPath", path),
        status_replicas_path=reader.opt_string(scale, "statusReplicasPath", path),
        label_selector_path=reader.opt_string(scale, "labelSelectorPath", path),
    )


def read_printer_columns(
    reader: DocumentReader, value: Any, path: JsonPath, compact: bool = False
) -> tuple[PrinterColumn, ...]:
    """Printer columns (the CRD's additionalPrinterColumns; the compact format's printerColumns, which may
    compute a cell with a function instead of a JSONPath)."""
    keys, formats = (
        (_COMPACT_COLUMN_KEYS, COMPACT_COLUMN_FORMATS)
        if compact
        else (_COLUMN_KEYS, COLUMN_FORMATS)
    )
    columns = []
    for index, item in enumerate(reader.sequence(value, path) or []):
        here = (*path, index)
        required = ("name", "type") if compact else ("name", "type", "jsonPath")
        column = reader.mapping(item, here, keys, required=required)
        if column is None:
            continue
        if compact and ("jsonPath" in column) == ("cell" in column):
            reader.error(here, "expected exactly one of jsonPath and cell")
        kind = column.get("type")
        checked = reader.choice(kind, (*here, "type"), COLUMN_TYPES) if kind is not None else None
        columns.append(
            PrinterColumn(
                name=reader.opt_string(column, "name", here),
                type=checked or "string",  # checked against COLUMN_TYPES
                json_path=reader.opt_string(column, "jsonPath", here),
                format=_column_format(reader, column, here, formats),
                description=reader.opt_string(column, "description", here),
                priority=reader.opt_int(column, "priority", here, 0),
                cell=reader.opt_string(column, "cell", here),
            )
        )
    return tuple(columns)


def _column_format(
    reader: DocumentReader, column: dict[str, Any], path: JsonPath, formats: tuple[str, ...]
) -> str:
    if column.get("format") is None:
        return ""
    return reader.choice(column["format"], (*path, "format"), formats) or ""


def check_schema_props(reader: DocumentReader, node: Any, path: JsonPath) -> None:
    """Check that a CRD schema uses only JSONSchemaProps fields, each with a value of the right shape."""
    schema = reader.mapping(node, path, JSON_SCHEMA_PROPS)
    if schema is None:
        return
    for key, value in schema.items():
        here = (*path, key)
        if key in ("properties", "patternProperties", "definitions"):
            for name, sub in (reader.mapping(value, here) or {}).items():
                check_schema_props(reader, sub, (*here, name))
        elif key in ("allOf", "anyOf", "oneOf"):
            for index, sub in enumerate(reader.sequence(value, here) or []):
                check_schema_props(reader, sub, (*here, index))
        elif key == "not":
            check_schema_props(reader, value, here)
        elif key == "items" and isinstance(value, list):
            for index, sub in enumerate(
                value
            ):  # the array form: rejected by check, with apiextensions' reason
                check_schema_props(reader, sub, (*here, index))
        elif key in ("items", "additionalProperties", "additionalItems"):
            if not isinstance(value, bool) or key == "items":
                check_schema_props(reader, value, here)
        elif key == "dependencies":
            for name, sub in (reader.mapping(value, here) or {}).items():
                if isinstance(sub, list):
                    reader.strings(sub, (*here, name))
                else:
                    check_schema_props(reader, sub, (*here, name))
        elif key == "required":
            reader.strings(value, here)
        elif key == "type":
            reader.string(value, here)
        elif key == "externalDocs":
            docs = reader.mapping(value, here, ("description", "url")) or {}
            for item in docs:
                reader.string(docs[item], (*here, item))
        else:
            check_keyword_value(reader, key, value, here)


def load_crd(document: YamlDocument) -> tuple[Definition | None, DefinitionSource, DocumentReader]:
    """One CustomResourceDefinition document → its Definition (None when it has errors), whether read from a
    file by `apiforge generate` or posted to a running server: one judgement for both."""
    reader = DocumentReader(document)
    source = DefinitionSource(document, "crd")
    crd = reader.mapping(document.value, (), _TOP_KEYS, required=("spec",)) or {}
    metadata = crd.get("metadata")
    if metadata is not None:
        reader.mapping(metadata, ("metadata",), _OBJECT_META_KEYS)
    if crd.get("status") is not None:
        reader.mapping(crd["status"], ("status",), _STATUS_KEYS)
    spec = reader.mapping(
        crd.get("spec", {}), ("spec",), _SPEC_KEYS, ("group", "names", "scope", "versions")
    )
    if spec is None:
        return None, source, reader
    sp = ("spec",)
    for name, target in (("group", "group"), ("scope", "scope"), ("versions", "versions")):
        source.record((name,), (*sp, target))
    group = reader.opt_string(spec, "group", sp)
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    unapproved = approval_problem(group, annotations)
    if unapproved:
        reader.error(("metadata", "annotations", ANNOTATION), unapproved)
    scope = reader.choice(spec["scope"], (*sp, "scope"), SCOPES) if "scope" in spec else None
    names = _names(reader, source, spec.get("names"))
    _conversion(reader, spec)
    if spec.get("preserveUnknownFields") is not None:
        keep = reader.boolean(spec["preserveUnknownFields"], (*sp, "preserveUnknownFields"))
        if keep:
            reader.error(
                (*sp, "preserveUnknownFields"),
                "preserveUnknownFields: true is not supported (apiextensions.k8s.io/v1 requires false); "
                "use x-kubernetes-preserve-unknown-fields: true on the schema nodes that need it",
            )
    conversion = spec.get("conversion") or {}
    webhook = conversion.get("webhook") or {} if conversion.get("strategy") == "Webhook" else None
    versions = _versions(
        reader, source, spec.get("versions"), _STRATEGY_NONE if webhook is None else Conversion()
    )
    if names is not None and isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
        expected = f"{names['plural']}.{group}"
        if metadata["name"] != expected:
            reader.error(
                ("metadata", "name"), f'must be "{expected}" (spec.names.plural + "." + spec.group)'
            )
    if reader.errors or names is None or scope is None:
        return None, source, reader
    definition = Definition(
        source=document.file,
        group=group,
        kind=names["kind"],
        plural=names["plural"],
        singular=names["singular"],
        list_kind=names["listKind"],
        scope=scope,  # type: ignore[arg-type]  # checked against SCOPES
        versions=tuple(versions),
        short_names=reader.opt_strings(spec["names"], "shortNames", (*sp, "names")),
        categories=reader.opt_strings(spec["names"], "categories", (*sp, "names")),
        custom_resource=True,
        conversion_webhook=webhook,
    )
    return definition, source, reader


def _names(reader: DocumentReader, source: DefinitionSource, value: Any) -> dict[str, str] | None:
    path = ("spec", "names")
    names = reader.mapping(value, path, _NAMES_KEYS, required=("plural", "kind"))
    if names is None:
        return None
    kind = reader.opt_string(names, "kind", path)
    out = {
        "kind": kind,
        "plural": reader.opt_string(names, "plural", path),
        "singular": reader.opt_string(names, "singular", path, kind.lower()),
        "listKind": reader.opt_string(names, "listKind", path, f"{kind}List"),
    }
    for key in ("kind", "plural", "singular", "listKind", "shortNames", "categories"):
        # A defaulted singular / listKind is reported at the kind it was derived from.
        present = names.get(key) is not None or key in ("shortNames", "categories")
        source.record((key,), (*path, key if present else "kind"))
    reader.opt_strings(names, "shortNames", path)
    reader.opt_strings(names, "categories", path)
    return out


def _conversion(reader: DocumentReader, spec: dict[str, Any]) -> None:
    path = ("spec", "conversion")
    conversion = spec.get("conversion")
    if conversion is None:
        return
    stanza = reader.mapping(conversion, path, _CONVERSION_KEYS)
    if stanza is None:
        return
    strategy = stanza.get("strategy", "None")
    if strategy == "Webhook":
        _webhook(reader, stanza.get("webhook"), (*path, "webhook"))
    elif reader.choice(strategy, (*path, "strategy"), ("None", "Webhook")) and "webhook" in stanza:
        reader.error((*path, "webhook"), 'must not be set unless strategy is "Webhook"')


def _webhook(reader: DocumentReader, webhook: Any, path: JsonPath) -> None:
    """kube's ValidateCustomResourceConversion for strategy Webhook (apiextensions/validation), at the paths
        of kube's internal type (``spec.conversion.webhookClientConfig``, ``...conversionReviewVersions``): a
        client config naming exactly one of url (kube's ValidateWebhookURL) and service, and a review version kube
    speaks."""
    conversion = path[:-1]
    stanza = {} if webhook is None else reader.mapping(webhook, path, _WEBHOOK_KEYS)
    if stanza is None:
        return
    versions = reader.strings(
        stanza.get("conversionReviewVersions") or [], (*path, "conversionReviewVersions")
    )
    where = (*conversion, "conversionReviewVersions")
    if not versions:
        reader.error(where, "Required value: must specify one of v1, v1beta1")
    elif not set(versions) & {"v1", "v1beta1"}:
        listed = ", ".join(f'"{v}"' for v in versions)
        reader.error(
            where, f"Invalid value: []string{{{listed}}}: must include at least one of v1, v1beta1"
        )
    where = (*conversion, "webhookClientConfig")
    config = stanza.get("clientConfig")
    if config is None:
        reader.error(where, "Required value: required when strategy is set to Webhook")
        return
    config = reader.mapping(config, (*path, "clientConfig"), ("url", "service", "caBundle"))
    if config is None:
        return
    if ("url" in config) == ("service" in config):
        reader.error(where, "Required value: exactly one of url or service is required")
    elif "url" in config:
        url = reader.string(config["url"], (*where, "url"))
        for cause in webhook_url_causes("", url) if url is not None else ():
            reader.error((*where, "url"), cause.message)
    else:
        service = reader.mapping(config["service"], (*where, "service"), _SERVICE_KEYS)
        for key in ("name", "namespace"):
            if service is not None and not service.get(key):
                reader.error((*where, "service", key), f"Required value: service {key} is required")


def _versions(
    reader: DocumentReader, source: DefinitionSource, value: Any, conversion: Conversion
) -> list[Version]:
    path: JsonPath = ("spec", "versions")
    items = reader.sequence(value, path)
    if not items:
        if items is not None:
            reader.error(path, "expected at least one version")
        return []
    versions: list[Version] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        here = (*path, index)
        entry = reader.mapping(item, here, _VERSION_KEYS, ("name", "served", "storage", "schema"))
        if entry is None:
            continue
        name = reader.opt_string(entry, "name", here)
        if name in seen:
            reader.error((*here, "name"), f'duplicate version "{name}"')
            continue
        seen.add(name)
        version = _version(reader, source, entry, name, here, conversion)
        if version is not None:
            versions.append(version)
    return versions


def _version(
    reader: DocumentReader,
    source: DefinitionSource,
    entry: dict[str, Any],
    name: str,
    here: JsonPath,
    conversion: Conversion,
) -> Version | None:
    source.record(("versions", name), here)
    source.record(("versions", name, "schema"), (*here, "schema", "openAPIV3Schema"))
    source.record(("versions", name, "printerColumns"), (*here, "additionalPrinterColumns"))
    source.record(("versions", name, "conversion"), ("spec", "conversion"))
    schema_path = (*here, "schema")
    wrapper = reader.mapping(
        entry.get("schema"), schema_path, ("openAPIV3Schema",), ("openAPIV3Schema",)
    )
    schema = wrapper.get("openAPIV3Schema") if wrapper else None
    if schema is not None:
        check_schema_props(reader, schema, (*schema_path, "openAPIV3Schema"))
    status, scale = False, None
    subresources = entry.get("subresources")
    if subresources is not None:
        sub_path = (*here, "subresources")
        found = reader.mapping(subresources, sub_path, _SUBRESOURCE_KEYS) or {}
        if found.get("status") is not None:
            status = (
                reader.mapping(found["status"], (*sub_path, "status"), ()) is not None
            )  # status: {}
        if found.get("scale") is not None:
            scale = read_scale(reader, found["scale"], (*sub_path, "scale"))
    selectable = []
    fields = reader.sequence(entry.get("selectableFields", []), (*here, "selectableFields")) or []
    for index, item in enumerate(fields):
        field_path = (*here, "selectableFields", index)
        source.record(("versions", name, "selectableFields", index), (*field_path, "jsonPath"))
        selected = reader.mapping(item, field_path, ("jsonPath",), ("jsonPath",))
        if selected is not None:
            selectable.append(reader.opt_string(selected, "jsonPath", field_path))
    version = Version(
        name=name,
        served=reader.opt_bool(entry, "served", here, False),
        storage=reader.opt_bool(entry, "storage", here, False),
        schema=schema if isinstance(schema, dict) else {},
        deprecated=reader.opt_bool(entry, "deprecated", here, False),
        deprecation_warning=reader.opt_string(entry, "deprecationWarning", here),
        status_subresource=status,
        scale_subresource=scale,
        printer_columns=read_printer_columns(
            reader, entry.get("additionalPrinterColumns", []), (*here, "additionalPrinterColumns")
        ),
        selectable_fields=tuple(selectable),
        conversion=conversion,
    )
    # A schema that is not a mapping was reported by check_schema_props (or as missing).
    return version if isinstance(schema, dict) else None
