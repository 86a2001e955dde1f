"""ObjectMeta rules the apiserver enforces on create and update, with kube's wording.

Ports of k8s.io/apimachinery pkg/api/validation/objectmeta.go (``ValidateObjectMetaAccessor``),
pkg/apis/meta/v1/validation (labels, managed fields), pkg/api/validate/content (DNS names, label keys
and values, the message texts) and apiextensions-apiserver pkg/apiserver/schema/objectmeta/validation.go
(resources embedded with ``x-kubernetes-embedded-resource``).

Metadata arrives as a plain dict, not a decoded Go struct, so a member of the wrong JSON type is
reported here as a type error instead of failing to decode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

from apiserver.machinery.names import (
    RX_DNS1123_SUBDOMAIN,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_lowered_qualified_name,
    is_qualified_name,
)
from apiserver.schema import causes
from apiserver.schema.causes import Cause, GoStruct
from apiserver.schema.structural import Schema

__all__ = [
    "embedded_resources",
    "mask_trailing_dash",
    "name_is_dns_subdomain",
    "validate_embedded_resources",
    "validate_object_meta",
]

TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024
_FIELD_MANAGER_MAX_LENGTH: Final = 128
_MAX_SUBRESOURCE_NAME_LENGTH: Final = 256

_RX_GROUP_VERSION: Final = re.compile(r"^[^/]+(/[^/]+)?\Z")

_BANNED_OWNERS: Final = ({"apiVersion": "v1", "kind": "Event"},)
"""The types no object may name as its owner: apimachinery's BannedOwners (pkg/api/validation/objectmeta.go),
which fixes them by group, version and kind as this does."""

_FINALIZER_ORPHAN: Final = "orphan"
_FINALIZER_FOREGROUND: Final = "foregroundDeletion"


def mask_trailing_dash(name: str) -> str:
    """A generateName prefix checked as a name (apimachinery's maskTrailingDash)."""
    # Go's maskTrailingDash replaces the last *two* characters, as generated names append 5 more.
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """The name rule of custom resources (NameIsDNSSubdomain); ``prefix`` checks a generateName."""
    return is_dns1123_subdomain(mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """apimachinery's NameIsDNSLabel (ValidateNamespaceName): the name rule of namespaces."""
    return is_dns1123_label(mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    """path.ValidatePathSegmentName: the name rule of resources embedded in custom resources and of the RBAC
    kinds (`system:discovery`)."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


NameFunc = Callable[[str, bool], list[str]]


def _type_error(field: str, value: Any, type_name: str) -> Cause:
    json_type = (
        "null"
        if value is None
        else "boolean"
        if isinstance(value, bool)
        else "integer"
        if isinstance(value, int)
        else "number"
        if isinstance(value, float)
        else "string"
        if isinstance(value, str)
        else "array"
        if isinstance(value, list)
        else "object"
    )
    return causes.type_invalid(
        field, json_type, f'{field} in body must be of type {type_name}: "{json_type}"'
    )


_ONLY_STR: Final = frozenset({str})


def _string_map(meta: dict[str, Any], key: str, path: str, errs: list[Cause]) -> dict[str, str]:
    """Member ``key`` of ``meta``, a map of strings: its string entries (the map itself when they all
    are, the common case, checked without a Python loop), a type error for each of the others."""
    value = meta.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.append(_type_error(f"{path}.{key}", value, "object"))
        return {}
    if _ONLY_STR.issuperset(map(type, value.values())):
        return value
    good: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, str):
            good[k] = v
        else:
            errs.append(_type_error(f"{path}.{key}.{k}", v, "string"))
    return good


def _string(meta: dict[str, Any], key: str, path: str, errs: list[Cause]) -> str:
    value = meta.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        errs.append(_type_error(f"{path}.{key}", value, "string"))
        return ""
    return value


def label_causes(labels: dict[str, str], path: str) -> list[Cause]:
    """apimachinery's ValidateLabels: each key a qualified name, each value a label value."""
    if is_qualified_name.valid.issuperset(labels) and is_label_value.valid.issuperset(
        labels.values()
    ):
        return []
    errs: list[Cause] = []
    for key, value in labels.items():
        errs.extend(causes.invalid(path, key, msg) for msg in is_qualified_name(key))
        if isinstance(value, str):
            errs.extend(causes.invalid(path, value, msg) for msg in is_label_value(value))
    return errs


def validate_object_meta(
    metadata: Any,
    namespaced: bool,
    *,
    name_fn: NameFunc = name_is_dns_subdomain,
    path: str = "metadata",
) -> list[Cause]:
    """Causes for ``metadata`` of an object being created or updated (``ValidateObjectMetaAccessor``).

    ``name`` is required unless ``generateName`` is set (the registry generates the name from it) and
    must satisfy ``name_fn`` (a lowercase RFC 1123 subdomain for custom resources). ``namespace`` is
    required for namespaced kinds and forbidden for cluster-scoped ones. Labels, annotations (256 KiB in
    total), owner references, finalizers and managed fields are checked as kube checks them.

    This runs on every write: field paths are only formatted for a cause, and labels and annotations
    seen before are passed by set lookups.
    """
    if type(metadata) is dict and _passes(metadata, namespaced, name_fn):
        return []
    errs: list[Cause] = []
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return [_type_error(path, metadata, "object")]

    generate_name = _string(metadata, "generateName", path, errs)
    name = _string(metadata, "name", path, errs)
    if generate_name:
        for msg in name_fn(generate_name, True):
            errs.append(causes.invalid(f"{path}.generateName", generate_name, msg))
    if not name:
        if not generate_name:
            errs.append(causes.required(f"{path}.name", "name or generateName is required"))
    else:
        for msg in name_fn(name, False):
            errs.append(causes.invalid(f"{path}.name", name, msg))

    namespace = _string(metadata, "namespace", path, errs)
    if namespaced:
        if not namespace:
            errs.append(causes.required(f"{path}.namespace"))
        else:
            for msg in name_is_dns_label(namespace, False):
                errs.append(causes.invalid(f"{path}.namespace", namespace, msg))
    elif namespace:
        errs.append(causes.forbidden(f"{path}.namespace", "not allowed on this type"))

    generation = metadata.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errs.append(
            causes.invalid(f"{path}.generation", generation, "must be greater than or equal to 0")
        )

    errs.extend(label_causes(_string_map(metadata, "labels", path, errs), f"{path}.labels"))

    annotations = _string_map(metadata, "annotations", path, errs)
    if not is_lowered_qualified_name.valid.issuperset(annotations):
        for key in annotations:
            for msg in is_lowered_qualified_name(key):
                errs.append(causes.invalid(f"{path}.annotations", key, msg))
    if _too_large(annotations):
        errs.append(causes.too_long(f"{path}.annotations", TOTAL_ANNOTATION_SIZE_LIMIT))

    _owner_references(metadata.get("ownerReferences"), path, errs)
    _finalizers(metadata.get("finalizers"), path, errs)
    _managed_fields(metadata.get("managedFields"), path, errs)
    return errs


_MAX_SUBDOMAIN: Final = 253
_OPERATIONS: Final = ("Apply", "Update")
_FIELDS_TYPES: Final = (None, "", "FieldsV1")
_LABEL_NAMES: Final = is_dns1123_label.valid
_QUALIFIED: Final = is_qualified_name.valid
_LABEL_VALUES: Final = is_label_value.valid
_ANNOTATION_KEYS: Final = is_lowered_qualified_name.valid
_SURELY_SMALL: Final = TOTAL_ANNOTATION_SIZE_LIMIT // 4
"""Characters of annotations that cannot reach the limit in UTF-8 bytes (4 at most per character)."""


def _passes(metadata: dict[str, Any], namespaced: bool, name_fn: NameFunc) -> bool:
    """Whether :func:`validate_object_meta` would find nothing, answered for the metadata of nearly every
    write in one pass: a name, the namespace, labels, annotations and finalizers of the right types whose
    strings have all passed before (set lookups of remembered passes, which hold strings only), no owner
    references, managed fields that pass. False when unsure: the full checks then say what is wrong, if
    anything."""
    name = metadata.get("name")
    if type(name) is not str or not name or metadata.get("generateName") is not None:
        return False
    if name_fn is name_is_dns_subdomain:  # the usual rule, without its calls: a new name is new
        if len(name) > _MAX_SUBDOMAIN or RX_DNS1123_SUBDOMAIN.match(name) is None:
            return False
    elif name_fn(name, False):
        return False
    namespace = metadata.get("namespace")
    if namespaced:
        if type(namespace) is not str or namespace not in _LABEL_NAMES:
            return False
    elif namespace is not None and namespace != "":
        return False
    generation = metadata.get("generation")
    if generation is not None and (type(generation) is not int or generation < 0):
        return False
    if metadata.get("ownerReferences") is not None:
        return False
    entries = metadata.get("managedFields")  # an update's, as stored
    if entries is not None and not _entries_pass(entries):
        return False
    try:  # a value that is not hashable (a list, an object) is not a known string either
        return _known_strings(metadata)
    except TypeError:
        return False


def _entries_pass(entries: Any) -> bool:
    """Whether ``_managed_fields`` finds nothing in ``entries``."""
    if type(entries) is not list:
        return False
    for entry in entries:
        if type(entry) is not dict or entry.get("operation") not in _OPERATIONS:
            return False
        if entry.get("fieldsType") not in _FIELDS_TYPES:
            return False
        manager = entry.get("manager")
        if type(manager) is str and (
            len(manager) > _FIELD_MANAGER_MAX_LENGTH or not manager.isprintable()
        ):
            return False
        subresource = entry.get("subresource")
        if type(subresource) is str and len(subresource) > _MAX_SUBRESOURCE_NAME_LENGTH:
            return False
    return True


def _known_strings(metadata: dict[str, Any]) -> bool:
    """Labels, annotations and finalizers are strings that passed before; a join both refuses a value
    that is not a string and counts the characters of the annotations."""
    labels = metadata.get("labels")
    if labels is not None and not (
        type(labels) is dict
        and _QUALIFIED.issuperset(labels)
        and _LABEL_VALUES.issuperset(labels.values())
    ):
        return False
    annotations = metadata.get("annotations")
    if annotations is not None and not (
        type(annotations) is dict
        and _ANNOTATION_KEYS.issuperset(annotations)
        and len("".join(annotations)) + len("".join(annotations.values())) <= _SURELY_SMALL
    ):
        return False
    finalizers = metadata.get("finalizers")
    return finalizers is None or (
        type(finalizers) is list
        and _QUALIFIED.issuperset(finalizers)
        and not (_FINALIZER_ORPHAN in finalizers and _FINALIZER_FOREGROUND in finalizers)
    )


def _too_large(annotations: dict[str, str]) -> bool:
    """Whether the keys and values exceed the limit in UTF-8 bytes, as kube counts them; a character is at
    most 4 bytes, so a map far below the limit (every one but a few) is not encoded to be counted."""
    chars = sum(map(len, annotations)) + sum(map(len, annotations.values()))
    if chars * 4 <= TOTAL_ANNOTATION_SIZE_LIMIT:
        return False
    size = sum(map(len, map(str.encode, annotations))) + sum(
        map(len, map(str.encode, annotations.values()))
    )
    return size > TOTAL_ANNOTATION_SIZE_LIMIT


def _owner_references(refs: Any, path: str, errs: list[Cause]) -> None:
    if refs is None:
        return
    field = f"{path}.ownerReferences"
    if not isinstance(refs, list):
        errs.append(_type_error(field, refs, "array"))
        return
    first_controller = ""
    for ref in refs:
        if not isinstance(ref, dict):
            errs.append(_type_error(field, ref, "object"))
            continue
        api_version = ref.get("apiVersion") or ""
        kind = ref.get("kind") or ""
        version = str(api_version).rpartition("/")[2]
        if not version:
            errs.append(
                causes.invalid(f"{field}.apiVersion", api_version, "version must not be empty")
            )
        if not kind:
            errs.append(causes.invalid(f"{field}.kind", kind, "must not be empty"))
        if not ref.get("name"):
            errs.append(causes.invalid(f"{field}.name", ref.get("name") or "", "must not be empty"))
        if not ref.get("uid"):
            errs.append(causes.invalid(f"{field}.uid", ref.get("uid") or "", "must not be empty"))
        if {"apiVersion": api_version, "kind": kind} in _BANNED_OWNERS:
            group, _, version = str(api_version).rpartition(
                "/"
            )  # schema.GroupVersionKind's String()
            errs.append(
                causes.invalid(
                    field,
                    _go_owner_reference(ref),
                    f"{group}/{version}, Kind={kind} is disallowed from being an owner",
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                errs.append(
                    causes.invalid(
                        field,
                        [_go_owner_reference(r) if isinstance(r, dict) else r for r in refs],
                        'Only one reference can have Controller set to true. Found "true" in references for '
                        f"{first_controller} and {current}",
                    )
                )
            else:
                first_controller = current


def _go_owner_reference(ref: dict[str, Any]) -> GoStruct:
    """An owner reference as kube prints it in a cause: metav1.OwnerReference's fields in Go struct order,
    the four strings always (no omitempty), the two *bool only when set, anything else dropped."""
    printed = GoStruct((key, ref.get(key) or "") for key in ("apiVersion", "kind", "name", "uid"))
    for key in ("controller", "blockOwnerDeletion"):
        if ref.get(key) is not None:
            printed[key] = ref[key]
    return printed


def _finalizers(finalizers: Any, path: str, errs: list[Cause]) -> None:
    if finalizers is None:
        return
    field = f"{path}.finalizers"
    if not isinstance(finalizers, list):
        errs.append(_type_error(field, finalizers, "array"))
        return
    for finalizer in finalizers:
        if not isinstance(finalizer, str):
            errs.append(_type_error(field, finalizer, "string"))
            continue
        for msg in is_qualified_name(finalizer):
            errs.append(causes.invalid(field, finalizer, msg))
    if _FINALIZER_ORPHAN in finalizers and _FINALIZER_FOREGROUND in finalizers:
        errs.append(
            causes.invalid(
                field,
                finalizers,
                f"finalizer {_FINALIZER_ORPHAN} and {_FINALIZER_FOREGROUND} cannot be both set",
            )
        )


def _managed_fields(entries: Any, path: str, errs: list[Cause]) -> None:
    if entries is None:
        return
    field = f"{path}.managedFields"
    if not isinstance(entries, list):
        errs.append(_type_error(field, entries, "array"))
        return
    for i, entry in enumerate(entries):
        item = f"{field}[{i}]"
        if not isinstance(entry, dict):
            errs.append(_type_error(item, entry, "object"))
            continue
        operation = entry.get("operation") or ""
        if operation not in ("Apply", "Update"):
            errs.append(
                causes.invalid(f"{item}.operation", operation, "must be `Apply` or `Update`")
            )
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errs.append(causes.invalid(f"{item}.fieldsType", fields_type, "must be `FieldsV1`"))
        manager = entry.get("manager") or ""
        if isinstance(manager, str):
            if len(manager) > _FIELD_MANAGER_MAX_LENGTH:
                errs.append(causes.too_long(f"{item}.manager", _FIELD_MANAGER_MAX_LENGTH))
            if not manager.isprintable():  # as every character is, but without a Python loop
                for pos, ch in enumerate(manager):
                    if not ch.isprintable():
                        errs.append(
                            causes.invalid(
                                f"{item}.manager",
                                manager,
                                f"invalid character U+{ord(ch):04X} (at position {len(manager[:pos].encode())})",
                            )
                        )
        subresource = entry.get("subresource") or ""
        if isinstance(subresource, str) and len(subresource) > _MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(causes.too_long(f"{item}.subresource", _MAX_SUBRESOURCE_NAME_LENGTH))


_META_FIELDS: Final = ("apiVersion", "kind", "metadata")


def validate_embedded_resources(obj: Any, schema: Schema) -> list[Cause]:
    """TypeMeta and ObjectMeta of every ``x-kubernetes-embedded-resource`` inside ``obj`` (not the root)."""
    errs: list[Cause] = []
    for resource, path in embedded_resources(obj, schema):
        _embedded(resource, path, errs)
    return errs


def embedded_resources(obj: Any, schema: Schema) -> Iterator[tuple[dict[str, Any], str]]:
    """Every ``x-kubernetes-embedded-resource`` object inside ``obj`` with its field path (kube's
    field.Path: ``spec.template``, ``spec.items[0]``, ``spec.byName[key]``), outermost first."""
    if schema.has_embedded_below:
        yield from _walk(obj, schema, "")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _walk(x: Any, s: Schema, path: str) -> Iterator[tuple[dict[str, Any], str]]:
    if isinstance(x, dict):
        if s.embedded_resource:
            yield x, path
        if not s.has_embedded_below:
            return
        for key, value in x.items():
            prop = s.properties.get(key)
            if prop is not None:
                yield from _walk(value, prop, _join(path, key))
            elif s.additional_properties is not None:
                yield from _walk(value, s.additional_properties, f"{path}[{key}]")
    elif (
        isinstance(x, list | tuple)  # a tuple the server built is a list once stored
        and s.items is not None
        and (s.items.embedded_resource or s.items.has_embedded_below)
    ):
        for i, value in enumerate(x):
            yield from _walk(value, s.items, f"{path}[{i}]")


def _embedded(x: dict[str, Any], path: str, errs: list[Cause]) -> None:
    # apiVersion and kind are required, metadata is not.
    for key in ("apiVersion", "kind"):
        if key not in x:
            errs.append(causes.required(_join(path, key)))
    for key in _META_FIELDS:
        if key not in x:
            continue
        value = x[key]
        field = _join(path, key)
        if key == "apiVersion":
            if not isinstance(value, str):
                errs.append(causes.invalid(field, value, "must be a string"))
            elif not value:
                errs.append(causes.required(field))
            elif not _RX_GROUP_VERSION.match(value):
                errs.append(
                    causes.invalid(field, value, f"unexpected GroupVersion string: {value}")
                )
        elif key == "kind":
            if not isinstance(value, str):
                errs.append(causes.invalid(field, value, "must be a string"))
            elif not value:
                errs.append(causes.required(field))
            else:
                msgs = is_dns1035_label(value.lower())
                if msgs:
                    errs.append(
                        causes.invalid(
                            field,
                            value,
                            "may have mixed case, but should otherwise match: " + ",".join(msgs),
                        )
                    )
        elif isinstance(value, dict):
            meta = dict(value)
            if not meta.get("name"):
                # As kube: an embedded object may leave its name to whoever creates it.
                meta["name"] = "fakename"
            namespaced = bool(meta.get("namespace"))
            errs.extend(
                validate_object_meta(meta, namespaced, name_fn=path_segment_name, path=field)
            )
        elif value is not None:
            errs.append(_type_error(field, value, "object"))
