"""Schema validation of a custom resource: what kube-apiserver checks after pruning and defaulting.

``validate`` runs, in the order of apiextensions-apiserver's ``customResourceStrategy.Validate``:
the OpenAPI value validation (types, formats, bounds, enums, required, anyOf/oneOf/allOf/not), the
TypeMeta and ObjectMeta of ``x-kubernetes-embedded-resource`` objects, and the uniqueness invariants of
``x-kubernetes-list-type: set|map``. The ``x-kubernetes-validations`` (CEL) rules come after these, from
:func:`apiserver.schema.cel.validate_rules` (they need the old object on an update),
and the root ``metadata`` is checked separately with :func:`validate_object_meta`, as kube does.

Validation reads ``obj`` only. Pass the object after :func:`~apiserver.schema.prune` and
:func:`~apiserver.schema.apply_defaults`, as the apiserver does; otherwise unknown fields and
non-nullable nulls are reported as type errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apiserver.schema.causes import Cause
from apiserver.schema.listtype import validate_list_types
from apiserver.schema.objectmeta import validate_embedded_resources, validate_object_meta
from apiserver.schema.openapi import validate_values
from apiserver.schema.structural import Schema, compile_schema

__all__ = ["Cause", "validate", "validate_object_meta"]


def validate(obj: Any, schema: Mapping[str, Any] | Schema) -> list[Cause]:
    """The causes kube-apiserver would report for ``obj`` against the CRD schema ``schema``.

    An empty list means valid. Causes are in kube's order (see the module docstring), with the fields of
    an object visited in the schema's declaration order where Go's order is random.
    """
    compiled = compile_schema(schema)
    result = validate_values(obj, compiled)
    if compiled.has_embedded_below:
        result.extend(validate_embedded_resources(obj, compiled))
    if compiled.has_list_types_below:
        result.extend(validate_list_types(obj, compiled))
    return result
