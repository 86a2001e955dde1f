"""A built-in kind's object as kube's field manager sees it: through its Go struct.

kube decodes a built-in kind's body into its Go type and hands the field manager that object converted
back to unstructured (k8s.io/apimachinery/pkg/runtime/converter.go ``toUnstructured``), and on create the
live object it compares with is the type's zero value (k8s.io/apiserver/pkg/endpoints/handlers/create.go:
``liveObj, err := scope.Creater.New(scope.Kind)``). Two things follow:

* the zero object already holds every non-pointer struct (a Lease's or a review's ``spec``) and every
  non-omitempty scalar at its zero value, so creating one adds only the struct's fields: no ``.`` entry
  for the struct, no field for a scalar left at zero;
* an omitempty field sent at its zero value (a review's ``group: ""``) is not in the decoded object
  (converter.go ``isZero``), so nobody owns it.

The Go types are read off the kind's protobuf messages (:class:`~apiserver.encoding.protobuf.Message`),
which carry each Go field's omitempty and pointer-ness. A built-in kind served without protobuf (the
admissionregistration, apiextensions and apiregistration kinds) gets :func:`top_level_structs`: the
top-level fields its definition names as Go structs (``openapiTypes``), a kind's ``spec`` and ``status``,
which kube's API types declare as non-pointer structs (ValidatingAdmissionPolicy, CustomResourceDefinition,
APIService: ``Spec XSpec `json:"spec"```).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from apiserver.encoding.protobuf import STRUCT_SCALARS, Field, Message, decode_message
from apiserver.machinery.scheme import ResourceType, VersionType

__all__ = ["go_view", "stored_go_type", "top_level_structs", "zero_object"]


@functools.cache
def zero_object(message: Message) -> dict[str, Any]:
    """The Go zero value of the kind, as encoding/json prints it (non-pointer structs as ``{}``). Made once
    per kind (a message hashes in constant time), so shared: read it, never change it."""
    return decode_message(message, b"")


@functools.cache
def top_level_structs(kind: str, go_types: tuple[tuple[str, str], ...]) -> Message | None:
    """A message of the kind's top-level Go structs alone, from its ``openapiTypes`` (None: there are none);
    made once per kind, not on every write."""
    fields = tuple(
        Field(0, path, Message(name, ()))
        for path, name in go_types
        if "." not in path and not path.endswith("[]")
    )
    return Message(kind, fields) if fields else None


def go_type(resource: ResourceType, version: VersionType) -> Message | None:
    """A built-in kind's Go struct in ``version``: its protobuf message, else its top-level structs; None for
    a custom resource (kube types it from its schema alone)."""
    if version.protobuf is not None:
        return version.protobuf.message
    return top_level_structs(resource.kind, resource.go_types) if resource.builtin else None


def stored_go_type(
    resource: ResourceType, lookup: Callable[[str, str], ResourceType | None]
) -> Message | None:
    """The Go struct a built-in kind's objects are stored as: its storage version's, or for another
    resource's view (``stored_as``: events.k8s.io Events are core Events) that resource's, found by
    ``lookup`` (the Scheme's)."""
    if resource.stored_as is None:
        return go_type(resource, resource.storage_version)
    stored = lookup(*resource.stored_as)
    return None if stored is None else go_type(stored, stored.storage_version)


def _dropped(spec: Field, value: Any) -> bool:
    """Whether Go leaves the field out: omitempty, not a pointer nor a struct, and at its zero value
    (converter.go isZero: "", 0, false, nil, an empty map or slice; False == 0 == 0.0 here)."""
    struct = isinstance(spec.kind, Message) and not spec.repeated
    return (
        spec.omitempty
        and not spec.pointer
        and not struct
        and spec.kind not in STRUCT_SCALARS
        and value in (None, "", 0, [], {})
    )


def go_view(obj: Any, message: Message) -> Any:
    """``obj`` without the omitempty fields Go would drop at their zero value; shares what it keeps."""
    if not isinstance(obj, dict):
        return obj
    out: dict[str, Any] | None = None
    for spec in message.fields:
        name = spec.name
        if name not in obj or name == "metadata":
            continue
        value = obj[name]
        kind = spec.kind
        if _dropped(spec, value):
            out = dict(obj) if out is None else out
            del out[name]
            continue
        if isinstance(kind, Message):
            if spec.repeated and isinstance(value, list):
                viewed: Any = [go_view(item, kind) for item in value]
                changed = any(a is not b for a, b in zip(viewed, value, strict=True))
            else:
                viewed = go_view(value, kind)
                changed = viewed is not value
            if changed:
                out = dict(obj) if out is None else out
                out[name] = viewed
    return obj if out is None else out
