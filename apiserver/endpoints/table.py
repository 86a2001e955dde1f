"""Table output (meta.k8s.io/v1 Table), built from a version's printer columns as the CRD table convertor does.

kubectl asks for Tables on `get`; each row carries the object as PartialObjectMetadata by default, because
kubectl reads namespace and labels from it for `-A` and `--show-labels` (API-CONVENTIONS.md §7).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from apiserver.machinery.jsonpath import JSONPathError, find
from apiserver.machinery.scheme import PrinterColumn, VersionType

NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically.",
    "priority": 0,
}
DEFAULT_COLUMNS = (
    PrinterColumn(
        name="Age",
        type="date",
        json_path=".metadata.creationTimestamp",
        description="CreationTimestamp is a timestamp representing the server time when this object "
        "was created.",
    ),
)


def human_duration(seconds: float) -> str:
    """kube's duration.HumanDuration: the compact ages kubectl shows (5m, 3h12m, 2d)."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    total = int(seconds)
    minutes, hours, days = total // 60, total // 3600, total // 86400
    if total < 120:
        return f"{total}s"
    if minutes < 10:
        return f"{minutes}m" if total % 60 == 0 else f"{minutes}m{total % 60}s"
    if hours < 3:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d" if hours % 24 == 0 else f"{days}d{hours % 24}h"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if years < 8:
        return f"{years}y" if days % 365 == 0 else f"{years}y{days % 365}d"
    return f"{years}y"


def _age(value: Any, now: datetime) -> str | None:
    try:
        then = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return human_duration((now - then).total_seconds())


def _cell(obj: dict[str, Any], column: PrinterColumn, now: datetime) -> Any:
    try:
        values = find(obj, column.json_path)
    except JSONPathError:
        return None
    if not values or values[0] is None:
        return None
    if column.type == "date":
        return _age(values[0], now)
    if len(values) > 1:
        return ",".join(str(v) for v in values)
    value = values[0]
    if column.type == "string":
        return value if isinstance(value, str) else str(value)
    return value


def columns_of(version: VersionType) -> tuple[PrinterColumn, ...]:
    return version.printer_columns or DEFAULT_COLUMNS


def column_definitions(version: VersionType) -> list[dict[str, Any]]:
    return [NAME_COLUMN] + [
        {
            "name": c.name,
            "type": c.type,
            "format": c.format,
            "description": c.description,
            "priority": c.priority,
        }
        for c in columns_of(version)
    ]


def partial_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


def row(
    obj: dict[str, Any], version: VersionType, include_object: str, now: datetime
) -> dict[str, Any]:
    cells = [obj.get("metadata", {}).get("name", "")]
    cells.extend(_cell(obj, column, now) for column in columns_of(version))
    out: dict[str, Any] = {"cells": cells}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = partial_metadata(obj)
    return out


def table(
    objects: list[dict[str, Any]],
    version: VersionType,
    include_object: str,
    list_metadata: dict[str, Any],
    with_columns: bool = True,
) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_metadata,
        "columnDefinitions": column_definitions(version) if with_columns else [],
        "rows": [row(obj, version, include_object, now) for obj in objects],
    }
