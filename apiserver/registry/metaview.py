"""What a metadata-only watcher sees of an object: its type, identity, ownership and deletion state.

kube's garbage collector follows every resource through metadata-only informers (k8s.io/kubernetes
pkg/controller/garbagecollector/graph_builder.go watches ``metadatainformer`` objects, PartialObjectMetadata):
owner references, finalizers and the deletion timestamp are all it reads. A view of just those fields can be
made from the object a Store has just written, instead of from its stored bytes decoded again, and it is
made in containers of its own, so nothing the writer does with its object afterwards can reach it.
"""

from __future__ import annotations

from typing import Any

from apiserver.machinery.objects import Object

_SCALARS = ("name", "namespace", "uid", "deletionTimestamp")
"""Metadata fields of the view whose values are strings: shared as they are."""


def metadata_view(obj: Object, resource_version: str) -> Object:
    """apiVersion, kind, and name, namespace, uid, deletionTimestamp, finalizers and ownerReferences of
    ``obj``'s metadata, at ``resource_version``; the lists and references are copies (an owner reference
    holds only scalars), so the view shares no container with ``obj``. Made for every write while the
    garbage collector watches: plain loops, no comprehension's function call."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    view_metadata: dict[str, Any] = {}
    for key in _SCALARS:
        if key in metadata:
            view_metadata[key] = metadata[key]
    finalizers = metadata.get("finalizers")
    if isinstance(finalizers, (list, tuple)):  # a tuple is the array it is stored as
        view_metadata["finalizers"] = list(finalizers)
    references = metadata.get("ownerReferences")
    if isinstance(references, (list, tuple)):
        view_metadata["ownerReferences"] = [
            dict(ref) if isinstance(ref, dict) else ref for ref in references
        ]
    view_metadata["resourceVersion"] = resource_version
    view: Object = {}
    if "apiVersion" in obj:
        view["apiVersion"] = obj["apiVersion"]
    if "kind" in obj:
        view["kind"] = obj["kind"]
    view["metadata"] = view_metadata
    return view
