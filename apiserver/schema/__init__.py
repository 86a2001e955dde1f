"""The schema rules kube-apiserver applies to custom resources: pruning, defaulting and validation.

Pure functions over plain dicts and CRD ``openAPIV3Schema`` dicts, shared by generated resources and
CRDs posted at run time. On a write the apiserver applies them in this order::

    unknown = prune_resource(obj, schema) # metadata too; Strict: reject if unknown; Warn: warn for each
    prune_nulls(obj, schema)
    apply_defaults(obj, schema)
    causes = validate_object_meta(obj.get("metadata"), namespaced) + validate(obj, schema)

Schemas are compiled once and cached by identity (:func:`compile_schema`); treat them as immutable.
"""

from apiserver.schema.causes import Cause
from apiserver.schema.defaulting import apply_defaults, prune_nulls
from apiserver.schema.metafields import is_pruned, prune_resource
from apiserver.schema.objectmeta import validate_object_meta
from apiserver.schema.pruning import prune
from apiserver.schema.structural import Schema, compile_schema
from apiserver.schema.validation import validate

__all__ = [
    "Cause",
    "Schema",
    "apply_defaults",
    "compile_schema",
    "is_pruned",
    "prune",
    "prune_nulls",
    "prune_resource",
    "validate",
    "validate_object_meta",
]
