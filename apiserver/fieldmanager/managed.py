"""``metadata.managedFields`` entries: decoding, manager identity, ordering, the update cap.

Ports of k8s.io/apimachinery/pkg/util/managedfields/internal managedfields.go
(``DecodeManagedFields``, ``BuildManagerIdentifier``, ``encodeManagedFields``,
``sortEncodedManagedFields``), capmanagers.go and the reset rule of fieldmanager.go
(``isResetManagedFields``).

A manager is identified by the Go JSON of its entry without ``fieldsType``, ``fieldsV1`` and ``time``,
and, for ``Apply`` entries, without ``apiVersion`` — so an applier has one entry whatever version it
applies with, while an updater has one per (manager, apiVersion, subresource).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Final

from apiserver.fieldmanager.fieldpath import (
    FieldsV1Error,
    Node,
    c_union,
    decode_fields_v1,
    encode_fields_v1,
)
from apiserver.schema.causes import go_json

__all__ = [
    "ANCIENT_CHANGES",
    "APPLY",
    "BEFORE_FIRST_APPLY",
    "MAX_UPDATE_MANAGERS",
    "UPDATE",
    "Entry",
    "ManagedFieldsError",
    "cap_update_managers",
    "decode_entries",
    "encode_entries",
    "format_time",
    "identifier",
    "is_reset",
    "normalize_now",
]

APPLY: Final = "Apply"
UPDATE: Final = "Update"
BEFORE_FIRST_APPLY: Final = "before-first-apply"  # skipnonapplied.go
ANCIENT_CHANGES: Final = "ancient-changes"  # capmanagers.go
MAX_UPDATE_MANAGERS: Final = 10  # fieldmanager.go DefaultMaxUpdateManagers


class ManagedFieldsError(ValueError):
    """managedFields that ``DecodeManagedFields`` rejects."""


class Entry:
    """One manager's entry. ``fields`` is the set (root children in FieldsV1 shape); ``source`` is the
    stored ``fieldsV1`` it was read from, reused on encoding while ``fields`` is that same object."""

    __slots__ = ("api_version", "fields", "manager", "operation", "source", "subresource", "time")

    def __init__(
        self,
        manager: str,
        operation: str,
        api_version: str,
        subresource: str,
        time: str | None,
        fields: Node,
        source: Node | None = None,
    ) -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.subresource = subresource
        self.time = time
        self.fields = fields
        self.source = source

    def with_fields(self, fields: Node, time: str | None = None) -> Entry:
        """A copy with ``fields`` (and ``time``, when given)."""
        return Entry(
            self.manager,
            self.operation,
            self.api_version,
            self.subresource,
            self.time if time is None else time,
            fields,
            self.source,
        )

    def __repr__(self) -> str:
        return f"Entry({self.manager!r}, {self.operation!r}, {self.api_version!r}, {self.time!r})"


@lru_cache(maxsize=1024)
def identifier(manager: str, operation: str, api_version: str, subresource: str) -> str:
    """``BuildManagerIdentifier``: ``json.Marshal`` of the entry's identifying fields (omitempty).

    Kept (bounded): a cluster has few managers and every write computes the identifiers of all of
    an object's entries."""
    parts = []
    if manager:
        parts.append('"manager":' + go_json(manager))
    if operation:
        parts.append('"operation":' + go_json(operation))
    if api_version and operation != APPLY:
        parts.append('"apiVersion":' + go_json(api_version))
    if subresource:
        parts.append('"subresource":' + go_json(subresource))
    return "{" + ",".join(parts) + "}"


def format_time(moment: datetime) -> str:
    """``metav1.Time`` JSON: RFC 3339 in UTC, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _normalize_time(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ManagedFieldsError(f"invalid time {go_json(value)}")
    if len(value) == 20 and value[19] == "Z" and value[10] == "T":
        return value  # already canonical, the common case
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ManagedFieldsError(f"invalid time {go_json(value)}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return format_time(parsed)


def normalize_now(now: str) -> str:
    """``now`` as ``metav1.Time`` would write it."""
    normalized = _normalize_time(now)
    assert normalized is not None
    return normalized


def is_reset(raw: Any) -> bool:
    """``isResetManagedFields``: ``[]`` or ``[{}]`` in a request clears the managed fields."""
    if not isinstance(raw, list):
        return False
    if not raw:
        return True
    return (
        len(raw) == 1
        and isinstance(raw[0], Mapping)
        and all(v is None or v == "" for v in raw[0].values())
    )


def _decode_entry(index: int, raw: Any, trusted: bool) -> tuple[str, Entry]:
    if not isinstance(raw, Mapping):
        raise ManagedFieldsError(f"managed fields entry {index} is not an object")
    operation = raw.get("operation")
    if operation not in (APPLY, UPDATE):
        raise ManagedFieldsError("operation must be `Apply` or `Update`")
    api_version = raw.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        raise ManagedFieldsError("apiVersion must not be empty")
    fields_type = raw.get("fieldsType")
    if not fields_type:
        raise ManagedFieldsError(f"missing fieldsType in managed fields entry {index}")
    if fields_type != "FieldsV1":
        raise ManagedFieldsError(
            f'invalid fieldsType "{fields_type}" in managed fields entry {index}'
        )
    manager = raw.get("manager") or ""
    subresource = raw.get("subresource") or ""
    if not isinstance(manager, str) or not isinstance(subresource, str):
        raise ManagedFieldsError(f"invalid managed fields entry {index}")
    source = raw.get("fieldsV1")
    if trusted and isinstance(source, dict):
        fields: Node = source
        time = raw.get("time")
        if time is not None and not isinstance(time, str):
            raise ManagedFieldsError(f"invalid time in managed fields entry {index}")
    else:
        try:
            fields = decode_fields_v1(source)
        except FieldsV1Error as err:
            raise ManagedFieldsError(f"error decoding versioned set: {err}") from None
        time = _normalize_time(raw.get("time"))
        source = None
    key = identifier(manager, operation, api_version, subresource)
    return key, Entry(manager, operation, api_version, subresource, time, fields, source)


def decode_entries(raw: Any, *, trusted: bool) -> dict[str, Entry]:
    """Entries by manager identifier; a later entry for the same manager replaces an earlier one.

    ``trusted`` entries (the stored ones, written by this package) are used as they are; others (sent
    by a client) are canonicalized. Raises :class:`ManagedFieldsError`.
    """
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ManagedFieldsError("managedFields must be a list")
    managed: dict[str, Entry] = {}
    for index, item in enumerate(raw):
        key, entry = _decode_entry(index, item, trusted)
        managed[key] = entry
    return managed


def _order(entry: Entry) -> tuple[str, str, str, str, str]:
    # sortEncodedManagedFields: operation, time (none first), manager, apiVersion, subresource.
    # Canonical times sort as strings the way their Unix seconds do.
    return (entry.operation, entry.time or "", entry.manager, entry.api_version, entry.subresource)


def encode_entries(managed: Mapping[str, Entry]) -> list[dict[str, Any]]:
    """The ``managedFields`` list, in kube's order and field order; empty when nothing is managed."""
    out: list[dict[str, Any]] = []
    for entry in sorted(managed.values(), key=_order):
        encoded: dict[str, Any] = {}
        if entry.manager:
            encoded["manager"] = entry.manager
        encoded["operation"] = entry.operation
        encoded["apiVersion"] = entry.api_version
        if entry.time:
            encoded["time"] = entry.time
        encoded["fieldsType"] = "FieldsV1"
        encoded["fieldsV1"] = encode_fields_v1(entry.fields, entry.source)
        if entry.subresource:
            encoded["subresource"] = entry.subresource
        out.append(encoded)
    return out


def cap_update_managers(managed: dict[str, Entry], limit: int = MAX_UPDATE_MANAGERS) -> None:
    """capmanagers.go: past ``limit`` Update entries, merge the oldest, per apiVersion, into an
    ``ancient-changes`` entry until ``limit`` remain. Modifies ``managed``."""
    updaters = [key for key, entry in managed.items() if entry.operation == UPDATE]
    if len(updaters) <= limit:
        return
    updaters.sort(key=lambda key: (managed[key].time or "", key))
    first_by_version: dict[str, str] = {}
    length = len(updaters)
    for key in updaters:
        if length <= limit:
            break
        entry = managed.get(key)
        if entry is None:
            continue
        version = entry.api_version
        bucket = identifier(ANCIENT_CHANGES, UPDATE, version, "")
        first = first_by_version.get(version)
        if first is None:
            first_by_version[version] = key
            continue
        if key == bucket:
            continue  # merging the bucket into itself would delete it (a kube bug not worth copying)
        if bucket not in managed:
            moved = managed.pop(first)
            managed[bucket] = Entry(
                ANCIENT_CHANGES, UPDATE, version, "", moved.time, moved.fields, moved.source
            )
        target = managed[bucket]
        managed[bucket] = Entry(
            ANCIENT_CHANGES,
            UPDATE,
            version,
            "",
            entry.time,
            c_union(target.fields, entry.fields),
            target.source,
        )
        del managed[key]
        length -= 1
