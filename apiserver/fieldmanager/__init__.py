"""Field ownership (``metadata.managedFields``) and server-side apply, as pure functions.

A port of the parts of k8s.io/apimachinery/pkg/util/managedfields (formerly
k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager) and sigs.k8s.io/structured-merge-diff that an
API server needs, over plain dicts and CRD-style OpenAPI v3 schemas:

* :func:`update_managed_fields` — run on every create, update and non-apply patch: the writer takes the
  fields it added or changed, removed fields leave every owner;
* :func:`apply` — server-side apply: merge, prune what the applier dropped, detect conflicts
  (:class:`ApplyConflict`, a 409 ``APIError`` worded like kube), move ownership on ``force``;
* :func:`field_set`, :class:`FieldSet` and the FieldsV1 codec, :func:`path_string`.

Modules: :mod:`.fieldpath` (paths, sets, FieldsV1), :mod:`.typeinfo` (schema → SMD types),
:mod:`.typed` (object walks), :mod:`.created` (a create's set, remembered by the object's shape),
:mod:`.managed` (entries), :mod:`.conflict`, :mod:`.lastapplied` (client-side apply interop) and
:mod:`.manager` (the two entry points).
"""

from apiserver.fieldmanager.conflict import ApplyConflict, Conflict, conflict_message
from apiserver.fieldmanager.fieldpath import (
    FieldSet,
    FieldsV1Error,
    Path,
    decode_fields_v1,
    encode_fields_v1,
    path_string,
)
from apiserver.fieldmanager.lastapplied import LAST_APPLIED_ANNOTATION
from apiserver.fieldmanager.managed import MAX_UPDATE_MANAGERS
from apiserver.fieldmanager.manager import (
    apply,
    field_set,
    set_managed_fields,
    update_managed_fields,
)
from apiserver.fieldmanager.typed import TypedError
from apiserver.fieldmanager.typeinfo import compile_types

__all__ = [
    "LAST_APPLIED_ANNOTATION",
    "MAX_UPDATE_MANAGERS",
    "ApplyConflict",
    "Conflict",
    "FieldSet",
    "FieldsV1Error",
    "Path",
    "TypedError",
    "apply",
    "compile_types",
    "conflict_message",
    "decode_fields_v1",
    "encode_fields_v1",
    "field_set",
    "path_string",
    "set_managed_fields",
    "update_managed_fields",
]
