"""What a field manager owns, as an apply configuration: client-go's Extract<Kind> functions
(k8s.io/client-go/applyconfigurations/*/v1, over k8s.io/apimachinery/pkg/util/managedfields
ExtractInto), which read the manager's Apply entry of ``metadata.managedFields`` and cut the object down to
the fields that entry's FieldsV1 set names.

Apply configurations are the generated models themselves, not a second generated tree: every field of a
generated kind is optional but where its schema requires it, and ``apply`` sends only the fields that were
set (``exclude_unset``), so a model built with just the fields a manager wants to own is that manager's
apply configuration, with the same names and types as the objects read back."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def extract(obj: M, field_manager: str, subresource: str = "") -> M:
    """The part of ``obj`` that ``field_manager`` owns through server-side apply (of the main resource, or
    of ``subresource``, e.g. ``"status"``), with the identity every apply carries: apiVersion, kind, name
    and namespace. Applying it back changes nothing; it is where a controller edits its own intent."""
    wire = obj.model_dump(mode="json", exclude_unset=True)
    return type(obj).model_validate(extract_fields(wire, field_manager, subresource))


def extract_fields(
    wire: dict[str, Any], field_manager: str, subresource: str = ""
) -> dict[str, Any]:
    """``extract`` on the wire form of an object."""
    metadata = wire.get("metadata") or {}
    # a manager without an entry owns none of the object's members
    owned: dict[str, Any] = {".": {}}
    for entry in metadata.get("managedFields") or ():
        if (
            entry.get("manager") == field_manager
            and entry.get("operation") == "Apply"
            and (entry.get("subresource") or "") == subresource
        ):
            owned = entry.get("fieldsV1") or {}
            break
    extracted = _cut(wire, owned)
    identity = {key: metadata[key] for key in ("name", "namespace") if key in metadata}
    extracted["metadata"] = {**identity, **(extracted.get("metadata") or {})}
    for key in ("apiVersion", "kind"):
        if key in wire:
            extracted[key] = wire[key]
    return dict(sorted(extracted.items()))


def _cut(value: Any, fields: dict[str, Any]) -> Any:
    """``value`` reduced to the members a FieldsV1 set names: ``f:<name>`` a field or map key, ``k:<json>``
    the item of an associative list with those keys (its keys kept, as ExtractInto's WithAppendKeyFields
    does), ``v:<json>`` the item of a set, ``i:<n>`` an index. An empty set is a leaf: the whole value is
    owned; ``.`` alone owns the node but none of its members."""
    if not fields:
        return value
    members = {key: sub for key, sub in fields.items() if key != "."}
    if isinstance(value, dict):
        return {
            key[2:]: _cut(value[key[2:]], sub)
            for key, sub in members.items()
            if key.startswith("f:") and key[2:] in value
        }
    if isinstance(value, list):
        return [cut for index, item in enumerate(value) for cut in _cut_item(index, item, members)]
    return value


def _cut_item(index: int, item: Any, members: dict[str, Any]) -> list[Any]:
    """The owned part of one list item, if any member names it."""
    for key, sub in members.items():
        kind, _, text = key.partition(":")
        if kind == "k" and isinstance(item, dict):
            keys = orjson.loads(text)
            if all(item.get(name) == wanted for name, wanted in keys.items()):
                return [{**keys, **_cut(item, sub)}]
        elif kind == "v" and item == orjson.loads(text):
            return [item]
        elif kind == "i" and text == str(index):
            return [_cut(item, sub)]
    return []
