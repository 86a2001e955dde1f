"""Interop between client-side apply's annotation and server-side apply, for the manager ``kubectl``.

Ports of k8s.io/apimachinery/pkg/util/managedfields/internal lastappliedmanager.go and
lastappliedupdater.go (and lastapplied.go ``SetLastApplied``). They make ``kubectl apply
--server-side`` on an object that was client-side applied work without ``--force-conflicts``:

* conflicts on fields whose live value is still the one the ``last-applied-configuration`` annotation
  recorded are not conflicts (kubectl set them, via client-side apply);
* after the apply, the annotation is rewritten to the applied configuration, so a later client-side
  apply computes its patch from what was applied last.

Both only act for the field manager ``kubectl``; other names opt out, as in kube.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import orjson

from apiserver.encoding.limits import load_json
from apiserver.fieldmanager.fieldpath import Node, c_difference
from apiserver.fieldmanager.typed import TypedError, compare_objects, field_set_of
from apiserver.fieldmanager.typeinfo import TypeNode
from apiserver.schema.causes import go_json

__all__ = [
    "KUBECTL_MANAGER",
    "LAST_APPLIED_ANNOTATION",
    "allowed_conflicts",
    "has_last_applied",
    "with_last_applied",
]

LAST_APPLIED_ANNOTATION: Final = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL_MANAGER: Final = "kubectl"
# apimachinery validation TotalAnnotationSizeLimitB: past it the annotation is dropped, not an error.
_ANNOTATIONS_SIZE_LIMIT: Final = 256 * 1024


def _annotations(obj: Any) -> dict[str, Any] | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else None


def has_last_applied(obj: Any) -> bool:
    annotations = _annotations(obj)
    return bool(annotations and annotations.get(LAST_APPLIED_ANNOTATION))


def allowed_conflicts(
    live: dict[str, Any], root: TypeNode, api_version: str, ignored: Collection[str]
) -> Node | None:
    """``allowedConflictsFromLastApplied``: the fields of the last-applied configuration whose live
    value is unchanged, or ``None`` when there is no usable annotation."""
    annotations = _annotations(live)
    text = annotations.get(LAST_APPLIED_ANNOTATION) if annotations else None
    if not isinstance(text, str) or not text:
        return None
    try:
        last_applied = load_json(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(last_applied, dict) or last_applied.get("apiVersion") != api_version:
        return None
    try:
        fields = field_set_of(last_applied, root, ignored)
        added, modified, removed = compare_objects(last_applied, live, root, ignored)
    except TypedError:
        return None
    for changed in (modified, added, removed):
        fields = c_difference(fields, changed)
    return fields


def _build_last_applied(applied: dict[str, Any]) -> str:
    # buildLastApplied: the applied object without the annotation, as UnstructuredJSONScheme encodes
    # it (json.Encoder: sorted keys, HTML-safe escapes, a trailing newline).
    meta = applied.get("metadata")
    if isinstance(meta, dict):
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED_ANNOTATION in annotations:
            trimmed = {k: v for k, v in annotations.items() if k != LAST_APPLIED_ANNOTATION}
            applied = {**applied, "metadata": {**meta, "annotations": trimmed}}
    return go_json(applied) + "\n"


def with_last_applied(obj: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its last-applied annotation set to ``applied`` (``SetLastApplied``): a shallow
    copy down to the annotations, or with the annotation removed when the annotations would exceed
    kube's size limit."""
    value = _build_last_applied(applied)
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    annotations = dict(_annotations(obj) or {})
    annotations[LAST_APPLIED_ANNOTATION] = value
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > _ANNOTATIONS_SIZE_LIMIT:
        del annotations[LAST_APPLIED_ANNOTATION]
    return {**obj, "metadata": {**meta, "annotations": annotations}}
