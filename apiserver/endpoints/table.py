"""Table output (meta.k8s.io/v1 Table), built from a version's printer columns as the CRD table convertor does.

kubectl asks for Tables on `get`; each row carries the object as PartialObjectMetadata by default, because
kubectl reads namespace and labels from it for `-A` and `--show-labels` (API-CONVENTIONS.md §7).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any

from apiserver.endpoints.tablecells import json_path_cell
from apiserver.machinery.jsonpath import JSONPathError, find
from apiserver.machinery.scheme import PrinterColumn, VersionType

CellFunction = Callable[[dict[str, Any], datetime], Any]
"""A built-in printer's cell (kube's pkg/printers/internalversion): the object and the time of the request."""

# the Name and Age columns' descriptions are ObjectMeta's field docs, whole, as kube's table convertors take
# them (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types_swagger_doc_generated.go)
NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. Name is "
    "primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    "priority": 0,
}
DEFAULT_COLUMNS = (
    PrinterColumn(
        name="Age",
        type="date",
        json_path=".metadata.creationTimestamp",
        description="CreationTimestamp is a timestamp representing the server time when this object was "
        "created. It is not guaranteed to be set in happens-before order across separate operations. Clients "
        "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
        "Read-only. Null for lists. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    ),
)


def _cell(obj: dict[str, Any], column: PrinterColumn, now: datetime) -> Any:
    if column.cell:
        return cell_function(column.cell)(obj, now)
    try:
        values = find(obj, column.json_path)
    except JSONPathError:
        return None
    return json_path_cell(column.type, values, now)


@cache
def cell_function(reference: str) -> CellFunction:
    """The function a column's ``cell`` reference (``package.module:name``) names. The generated REST bindings
    import its module, so a wrong reference fails the server's start, not a request."""
    module, _, name = reference.partition(":")
    function: CellFunction = getattr(importlib.import_module(module), name)
    return function


def columns_of(version: VersionType) -> tuple[PrinterColumn, ...]:
    return version.printer_columns or DEFAULT_COLUMNS


def _names_itself(version: VersionType) -> bool:
    """A version whose columns include one of format ``name`` places the name itself (kube's events print it
    last, in -o wide); otherwise the name is the first column, as for every CRD."""
    return any(c.format == "name" for c in columns_of(version))


def _default_description(column: PrinterColumn) -> str:
    """tableconvertor.New's description of a CRD column that has none."""
    return f"Custom resource definition column (in JSONPath format): {column.json_path}"


def column_definitions(version: VersionType) -> list[dict[str, Any]]:
    declared = [
        {
            "name": c.name,
            "type": c.type,
            "format": c.format,
            "description": c.description or _default_description(c),
            "priority": c.priority,
        }
        for c in columns_of(version)
    ]
    return declared if _names_itself(version) else [NAME_COLUMN, *declared]


def partial_metadata(obj: dict[str, Any], meta_version: str = "v1") -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{meta_version}",
        "metadata": obj.get("metadata", {}),
    }


def row(
    obj: dict[str, Any],
    version: VersionType,
    include_object: str,
    now: datetime,
    meta_version: str = "v1",
) -> dict[str, Any]:
    cells = [] if _names_itself(version) else [obj.get("metadata", {}).get("name", "")]
    cells.extend(_cell(obj, column, now) for column in columns_of(version))
    # includeObject=None still writes the row's object, as null: TableRow.Object is a RawExtension, which
    # marshals an empty one as null (k8s.io/apimachinery/pkg/runtime/extension.go, MarshalJSON)
    out: dict[str, Any] = {"cells": cells, "object": None}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = partial_metadata(obj, meta_version)
    return out


def table(
    objects: list[dict[str, Any]],
    version: VersionType,
    include_object: str,
    list_metadata: dict[str, Any],
    with_columns: bool = True,
    meta_version: str = "v1",
) -> dict[str, Any]:
    """A Table in meta.k8s.io/``meta_version`` (its rows' PartialObjectMetadata too)."""
    now = datetime.now(UTC)
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{meta_version}",
        "metadata": list_metadata,
        "columnDefinitions": column_definitions(version) if with_columns else [],
        "rows": [row(obj, version, include_object, now, meta_version) for obj in objects],
    }
