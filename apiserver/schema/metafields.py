"""Fields of ``metadata`` that metav1.ObjectMeta does not have, dropped as kube drops them.

kube decodes ``metadata`` into the Go ObjectMeta struct and writes it back (apiextensions-apiserver
pkg/apiserver/schema/objectmeta/coerce.go ``GetObjectMetaWithOptions`` and ``SetObjectMeta``, for the root of a
custom resource and for every ``x-kubernetes-embedded-resource``; the typed decoder for built-in kinds), so a
member the struct lacks, at any depth of it (an owner reference's, a managedFields entry's), is gone. With
unknown field paths asked for, each is reported as sigs.k8s.io/json's strict decoding names it, under the
metadata's own path: ``metadata.bogusMeta``, ``spec.template.metadata.ownerReferences[0].bogus``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from apiserver.schema.objectmeta import embedded_resources
from apiserver.schema.prunecheck import tree_is_clean, tree_is_pruned
from apiserver.schema.pruning import prune
from apiserver.schema.structural import Schema, compile_schema

__all__ = [
    "is_clean",
    "is_pruned",
    "prune_embedded_object_meta",
    "prune_object_meta",
    "prune_resource",
]

# k8s.io/apimachinery pkg/apis/meta/v1/types.go: the JSON names of OwnerReference and ManagedFieldsEntry
_OWNER_REFERENCE: Final = frozenset(
    {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}
)
_MANAGED_FIELDS_ENTRY: Final = frozenset(
    {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)
_LISTS: Final = {"ownerReferences": _OWNER_REFERENCE, "managedFields": _MANAGED_FIELDS_ENTRY}
_ARRAYS: Final = (list, tuple)
# ObjectMeta's JSON names (clusterName was removed in Kubernetes 1.25)
_OBJECT_META: Final = frozenset(
    {
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
        "finalizers",
        *_LISTS,
    }
)


def prune_object_meta(metadata: Any, path: str) -> list[str]:
    """Remove, in place, what ObjectMeta does not declare from ``metadata`` (found at ``path``, e.g.
    ``metadata`` or ``spec.template.metadata``); return the removed fields' paths, sorted."""
    if not isinstance(metadata, dict):
        return []  # a malformed metadata is validation's to report
    unknown = _drop(metadata, _OBJECT_META, path)
    for key, fields in _LISTS.items():
        items = metadata.get(key)
        if isinstance(items, list):
            for index, item in enumerate(items):
                if isinstance(item, dict):
                    unknown += _drop(item, fields, f"{path}.{key}[{index}]")
    return sorted(unknown)


def _object_meta_is_pruned(metadata: Any) -> bool:
    """True when :func:`prune_object_meta` would remove nothing: one subset test per mapping."""
    if not isinstance(metadata, dict):
        return True
    if not metadata.keys() <= _OBJECT_META:
        return False
    refs = metadata.get("ownerReferences")
    entries = metadata.get("managedFields")  # a write's own, on every update
    return (refs is None or _entries_known(refs, _OWNER_REFERENCE)) and (
        entries is None or _entries_known(entries, _MANAGED_FIELDS_ENTRY)
    )


def _entries_known(items: Any, fields: frozenset[str]) -> bool:
    """Every object of the list ``items`` has only ``fields``."""
    if isinstance(items, _ARRAYS):  # a tuple the server built is a list once stored
        for item in items:
            if isinstance(item, dict) and not item.keys() <= fields:
                return False
    return True


def _drop(members: dict[str, Any], known: frozenset[str], path: str) -> list[str]:
    doomed = [key for key in members if key not in known]
    for key in doomed:
        del members[key]
    return [f"{path}.{key}" for key in doomed]


def prune_embedded_object_meta(obj: Any, schema: Schema) -> list[str]:
    """:func:`prune_object_meta` on the metadata of every embedded resource inside ``obj`` (kube's
    ``CoerceWithOptions`` after pruning), paths sorted."""
    unknown: list[str] = []
    for resource, path in embedded_resources(obj, schema):
        if "metadata" in resource:
            unknown += prune_object_meta(resource["metadata"], f"{path}.metadata")
    return sorted(unknown)


def prune_resource(obj: dict[str, Any], schema: Mapping[str, Any] | Schema) -> list[str]:
    """Prune a whole object as kube decodes one (customresource_handler.go ``unstructuredSchemaCoercer``):
    its metadata, then the fields the schema lacks, then embedded resources' metadata; the unknown field
    paths in that order, as kube reports them."""
    compiled = compile_schema(schema)
    if is_pruned(obj, compiled):  # the common write: one compiled check instead of the walks below
        return []
    unknown = prune_object_meta(obj.get("metadata"), "metadata")
    unknown += prune(obj, compiled)
    return unknown + prune_embedded_object_meta(obj, compiled)


def is_clean(obj: dict[str, Any], schema: Schema) -> bool:
    """True when neither :func:`prune_resource` nor ``defaulting.prune_nulls`` would change ``obj``: a
    write's two first steps answered by one compiled walk (False when unsure: run both)."""
    return _object_meta_is_pruned(obj.get("metadata")) and tree_is_clean(obj, schema)


def is_pruned(obj: dict[str, Any], schema: Mapping[str, Any] | Schema) -> bool:
    """True when :func:`prune_resource` would leave ``obj`` as it is; it is not changed either way."""
    schema = compile_schema(schema)
    if not _object_meta_is_pruned(obj.get("metadata")) or not tree_is_pruned(obj, schema):
        return False
    return not schema.has_embedded_below or all(
        _object_meta_is_pruned(resource["metadata"])
        for resource, _ in embedded_resources(obj, schema)
        if "metadata" in resource
    )
