"""A built-in kind's object as kube answers it once stored: decoded into its Go struct and printed by
encoding/json, as a protobuf round trip through etcd leaves it (k8s.io/apiserver's etcd3 store decodes
every value it writes into the object it answers, and a dry run copies through the codec the same way).

What that adds and drops, field by field, by the Go struct field's rules (:class:`~.protobuf.Field`):

* a field without omitempty is always printed: a string, number or bool at its zero value, a slice, map
  or pointer left nil as ``null`` (a Role's ``rules``, an Event's ``reportingComponent: ""``);
* a non-pointer struct is always printed, ``{}`` when nothing is set (an Event's ``source``), and a zero
  ``metav1.Time`` is ``null`` (a condition's ``lastTransitionTime``);
* an omitempty scalar at its zero value, and an empty slice or map (protobuf keeps no empty ones), is
  left out.

``metadata`` is the registry's to shape (it sets and strips its fields itself) and is left as it is."""

from __future__ import annotations

from typing import Any

from apiserver.encoding.protobuf import STRUCT_SCALARS, Field, MapOf, Message, go_zero

__all__ = ["go_printed"]

_ABSENT: Any = ...


def go_printed(obj: dict[str, Any], message: Message) -> dict[str, Any]:
    """``obj`` as Go prints it after decoding it into ``message``'s struct; shares what it keeps, and is
    ``obj`` itself when nothing changes."""
    out: dict[str, Any] | None = None
    for spec in message.fields:
        name = spec.name
        if name == "metadata":
            continue
        present = name in obj
        value = obj.get(name)
        printed = _printed(spec, value, present)
        if printed is _ABSENT:
            if present:
                out = dict(obj) if out is None else out
                del out[name]
        elif not present or printed is not value:
            out = dict(obj) if out is None else out
            out[name] = printed
    return obj if out is None else out


def _printed(spec: Field, value: Any, present: bool) -> Any:
    """The field's printed value, or ``_ABSENT`` when Go leaves it out."""
    kind = spec.kind
    if spec.repeated or isinstance(kind, MapOf):
        if not value:  # absent, null, [] or {}: nil once stored
            return _ABSENT if spec.omitempty else None
        if isinstance(kind, Message) and isinstance(value, list):
            items = [go_printed(item, kind) if isinstance(item, dict) else item for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return value
    if not present or value is None:
        if spec.pointer or kind == "bytes" or kind == "fieldsv1":
            return _ABSENT if spec.omitempty else None
        if isinstance(kind, Message) or kind in STRUCT_SCALARS:
            return go_zero(kind)
        return _ABSENT if spec.omitempty else go_zero(kind)
    if isinstance(kind, Message):
        return go_printed(value, kind) if isinstance(value, dict) else value
    if (
        spec.omitempty
        and not spec.pointer
        and kind not in STRUCT_SCALARS
        and value in ("", 0, False)
    ):
        return _ABSENT
    return value
