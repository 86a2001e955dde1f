"""Strategic merge patch (``application/strategic-merge-patch+json``) as kube-apiserver applies it.

A port of the apply half of k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (``mergeMap``,
``mergeSlice``, ``mergePatchIntoOriginal``, ``normalizeElementOrder`` and their helpers) with the
options kube-apiserver uses (``StrategicMergeMapPatch``: ``MergeParallelList`` and
``IgnoreUnmatchedNulls``), including the later fixes in Kubernetes 1.35: ``$deleteFromPrimitiveList``
deletes whatever the list's strategy (kubernetes#110472), values taken whole from the patch lose
their ``$patch`` directives (``removeDirectives``, kubernetes#117568) and their ``null`` members
(``discardNullValuesFromPatch``, kubernetes#107705).

kube reads the patch strategy of a field from Go struct tags. Here it comes from an OpenAPI v3 schema of
the whole object, the way kube's own ``PatchMetaFromOpenAPI`` (strategicpatch/types.go) reads one:
``x-kubernetes-patch-strategy`` (``merge``, ``replace``, ``retainKeys``, ``merge,retainKeys``) and
``x-kubernetes-patch-merge-key`` on the property. ``x-kubernetes-list-type: map`` plays no part: kube's
lookup ignores it (CRDs, which only have list types, get 415 for this content type), so such a list
without a patch strategy is replaced, like every list without one. ``$ref`` and ``allOf: [{$ref}]``
(how Kubernetes' OpenAPI v3 wraps references) are followed through ``resolve``. ObjectMeta comes from
apimachinery with its tags compiled in, so its ``finalizers`` (merge) and ``ownerReferences`` (merge by
``uid``) keep those strategies when the schema doesn't state one: the root's ``metadata`` and any
schema referring to ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`` are ObjectMeta.

Where kube's struct lookup fails ("unable to find api field"), because the stored object and the patch
both hold an object or a list under a field the type doesn't declare, this carries on without a
strategy (objects merge, lists are replaced): a typed stored object never has such fields in kube,
while here they can be preserved unknown fields.

Order follows kube exactly, Go quirks included: without ``$setElementOrder`` an item the stored list
lacks comes before the stored items (``mergeSortedSlice`` takes the patch's item whenever the two
can't both be placed by the stored order), which is why kubectl apply sends ``$setElementOrder``;
sorting uses Go's stable sort, as kube's comparator is not a strict order; and with
``$setElementOrder`` the stored order kube sorts by is its slice after merging changed it in place.
Other keys starting with ``$`` are not directives, to kube either: they are kept as fields.

Neither input is modified. Containers on the path of a change are copied; everything else in the
result is shared with ``original``, and values taken from the patch are shared with ``patch`` (as in
:func:`apiserver.patch.apply_merge_patch`). Like kube's library, the result can keep what kube's typed
decoding then drops: ``null`` members and directives nested in list items added whole or in values
replaced whole. kube's strict field validation reports such directives as unknown fields.

Failures raise :class:`~apiserver.patch.PatchError` with kube's message and, but for the errors below
that kube answers with 500, the status kube-apiserver answers with (``interpretStrategicMergePatchError`` in k8s.io/apiserver handlers/patch.go): 400 for a
malformed ``$deleteFromPrimitiveList``, ``$retainKeys`` or ``$setElementOrder`` directive or a patch
that is not an object, and 422 for lists of lists. Every other error kube passes through unwrapped and
answers with 500 (reason Unknown, which kubectl prints as "Error from server: ..."): a list item without
its merge key, an unknown ``$patch`` value, ``$patch: merge``, a ``$setElementOrder`` that is not a list
or contradicts the patch list, items of different types. Those are faults of the patch, and this server
answers no input with a 5xx: they are 400 here, with kube's message. Only a schema whose patch extensions
are malformed (a fault of the definition) is 500. kube's messages format values with Go's ``%v``, which
:func:`_go_format` imitates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from apiserver.patch.jsonpatch import PatchError

__all__ = ["Resolver", "apply_strategic_merge_patch", "components_resolver"]

Resolver = Callable[[str], Mapping[str, Any]]
"""Maps a ``$ref`` (e.g. ``#/components/schemas/io.k8s.api.core.v1.Container``) to its schema."""

_DIRECTIVE: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER: Final = "$setElementOrder"
_MERGE: Final = "merge"
_REPLACE: Final = "replace"
_DELETE: Final = "delete"
_RETAIN: Final = "retainKeys"

# Every other error kube-apiserver passes through unwrapped (interpretStrategicMergePatchError's default),
# which it answers with 500, reason Unknown. They are all faults of the patch, and this server answers no
# input with a 5xx (DESIGN.md): 400, reason BadRequest, with kube's message.
_UNWRAPPED: Final = 400

# mergepatch/errors.go; kube-apiserver answers 400 to these three.
_BAD_PRIMITIVE_LIST: Final = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS: Final = "invalid patch format of retainKeys"
_BAD_SET_ELEMENT_ORDER: Final = "invalid patch format of setElementOrder list"

# reflect type names of decoded JSON, as kube's messages print them.
_MAP: Final = "map[string]interface {}"
_LIST: Final = "[]interface {}"
_NIL: Final = "%!s(<nil>)"
_GO_TYPES: Final = (
    (bool, "bool"),
    (int, "int64"),
    (float, "float64"),
    (str, "string"),
    (dict, _MAP),
    (list, _LIST),
)

_OBJECT_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def apply_strategic_merge_patch(
    original: Mapping[str, Any],
    patch: Any,
    schema: Mapping[str, Any] | None,
    *,
    resolve: Resolver | None = None,
) -> dict[str, Any]:
    """Apply ``patch`` (decoded JSON) to ``original`` the way kube-apiserver applies a strategic
    merge patch, taking patch strategies from ``schema`` (the object's OpenAPI schema, ``None`` for
    none: then only ObjectMeta's lists merge) and following its ``$ref`` through ``resolve``.

    A ``null`` body leaves the object as it is, as kube decodes it to an empty patch.
    """
    if patch is None:
        return dict(original)
    if not isinstance(patch, dict):
        raise PatchError(
            f"json: cannot unmarshal {_json_kind(patch)} into Go value of type {_MAP}", 400
        )
    return _merge_map(original, patch, _Node(schema, resolve, root=True))


def components_resolver(schemas: Mapping[str, Mapping[str, Any]]) -> Resolver:
    """A :data:`Resolver` for an OpenAPI document's named schemas (v3 ``components.schemas`` or v2
    ``definitions``): Kubernetes refers to them as ``#/components/schemas/<name>``."""

    def resolve(ref: str) -> Mapping[str, Any]:
        return schemas[ref.rpartition("/")[2]]

    return resolve


# --- schema lookup ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PatchMeta:
    """A field's patch strategies and merge key (``PatchMeta``)."""

    strategies: tuple[str, ...] = ()
    merge_key: str = ""

    @classmethod
    def read(cls, schemas: tuple[Mapping[str, Any], ...]) -> _PatchMeta:
        """``parsePatchMetadata`` (types.go): the extensions split on commas; non-strings fail."""
        strategy = _extension(schemas, "x-kubernetes-patch-strategy")
        merge_key = _extension(schemas, "x-kubernetes-patch-merge-key")
        return cls(tuple(strategy.split(",")) if strategy is not None else (), merge_key or "")

    def strategy(self) -> str:
        """``extractRetainKeysPatchStrategy``: the strategy besides ``retainKeys``, which applying a
        patch ignores (the ``$retainKeys`` directive does the work)."""
        found = self.strategies
        if not found:
            return ""
        if len(found) == 1:
            return "" if found[0] == _RETAIN else found[0]
        if len(found) == 2 and _RETAIN in found:
            return found[1] if found[0] == _RETAIN else found[0]
        raise PatchError(f"unexpected patch strategy: {_go_format(list(found))}", 500)


# ObjectMeta's tags: Finalizers `patchStrategy:"merge"`, OwnerReferences `patchMergeKey:"uid"`.
_OBJECT_META_LISTS: Final = {
    "finalizers": _PatchMeta((_MERGE,)),
    "ownerReferences": _PatchMeta((_MERGE,), "uid"),
}


def _extension(schemas: tuple[Mapping[str, Any], ...], name: str) -> str | None:
    for schema in schemas:
        if name in schema:
            value = schema[name]
            if not isinstance(value, str):  # a fault of the schema, not of the patch
                raise PatchError(f"expected a string, but received a {_go_type(value)}", 500)
            return value
    return None


class _Node:
    """Where a value sits in the schema: the schemas describing it (the property's own first, then
    what it refers to), so that a lookup sees the property's extensions before the referred type's."""

    __slots__ = ("_object_meta", "_resolve", "_root", "schemas")

    def __init__(
        self,
        schema: Mapping[str, Any] | None,
        resolve: Resolver | None,
        *,
        root: bool = False,
        object_meta: bool = False,
    ) -> None:
        self.schemas = _expand(schema, resolve)
        self._resolve = resolve
        self._root = root
        self._object_meta = object_meta or any(
            str(s.get("$ref", "")).endswith(_OBJECT_META) for s in self.schemas
        )

    def field(self, key: str) -> tuple[_Node, _PatchMeta]:
        """The schema of member ``key`` and its patch metadata (``LookupPatchMetadataForStruct``).
        Map values (``additionalProperties``) carry no strategy, like a Go map's elements."""
        prop = _first(self.schemas, "properties", key)
        child = _Node(
            prop if prop is not None else _first(self.schemas, "additionalProperties"),
            self._resolve,
            object_meta=self._root and key == "metadata",
        )
        meta = _PatchMeta.read(child.schemas) if prop is not None else _PatchMeta()
        if self._object_meta and not meta.strategies and key in _OBJECT_META_LISTS:
            meta = _OBJECT_META_LISTS[key]
        return child, meta

    def items(self) -> _Node:
        """The schema of a list's items (``LookupPatchMetadataForSlice``). kube-openapi takes a field
        that refers to an object rather than an array as standing for its own items."""
        items = _first(self.schemas, "items")
        return _Node(items, self._resolve) if items is not None else self

    def name(self) -> str:
        """What kube's "cannot merge lists without merge key for ..." names (the Go kind)."""
        if _first(self.schemas, "properties") is not None:
            return "struct"
        return "map" if _first(self.schemas, "additionalProperties") is not None else "interface"


def _expand(
    schema: Mapping[str, Any] | None, resolve: Resolver | None
) -> tuple[Mapping[str, Any], ...]:
    """``schema`` and what it stands for through ``$ref`` and ``allOf``, outermost first."""
    found: list[Mapping[str, Any]] = []
    todo = [schema] if schema is not None else []
    seen: set[str] = set()
    while todo:
        current = todo.pop(0)
        found.append(current)
        ref = current.get("$ref")
        if isinstance(ref, str) and resolve is not None and ref not in seen:
            seen.add(ref)
            todo.append(resolve(ref))
        todo.extend(s for s in current.get("allOf") or () if isinstance(s, Mapping))
    return tuple(found)


def _first(schemas: tuple[Mapping[str, Any], ...], name: str, key: str | None = None) -> Any:
    """The first ``schema[name]`` (or ``schema[name][key]``) that is a schema."""
    for schema in schemas:
        value = schema.get(name)
        if isinstance(value, Mapping) and key is not None:
            value = value.get(key)
        if isinstance(value, Mapping):
            return value
    return None


# --- maps ------------------------------------------------------------------------------------------


def _merge_map(
    original: Mapping[str, Any] | None, patch: Mapping[str, Any], node: _Node
) -> dict[str, Any]:
    """``mergeMap``: directives first (``$patch``, ``$retainKeys``, ``$setElementOrder/...``), then
    each member of the patch in turn."""
    if _DIRECTIVE in patch:
        return _map_directive(patch)
    result = dict(original) if original is not None else {}
    pending = dict(patch)
    _retain_keys(result, pending)
    _set_element_orders(result, pending, node)
    for key, value in pending.items():
        _merge_member(result, key, value, node)
    return result


def _map_directive(patch: Mapping[str, Any]) -> dict[str, Any]:
    """``handleDirectiveInMergeMap``: ``replace`` takes the patch as it is, ``delete`` leaves an
    empty map; ``merge`` is not allowed here either."""
    directive = patch[_DIRECTIVE]
    if directive == _REPLACE:
        return {k: v for k, v in patch.items() if k != _DIRECTIVE}
    if directive == _DELETE:
        return {}
    raise _bad_patch_type(directive, patch)


def _retain_keys(result: dict[str, Any], pending: dict[str, Any]) -> None:
    """``applyRetainKeysDirective``: drop the members of ``result`` not listed; every non-null member
    of the patch must be listed."""
    if _RETAIN_KEYS not in pending:
        return
    keys = pending.pop(_RETAIN_KEYS)
    if not isinstance(keys, list):
        raise PatchError(_BAD_RETAIN_KEYS, 400)
    retained = {_hash_key(k) for k in keys}
    for key, value in pending.items():
        if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
            continue
        if (str, key) not in retained:
            raise PatchError(_BAD_RETAIN_KEYS, 400)
    for key in [k for k in result if (str, k) not in retained]:
        del result[key]


def _merge_member(result: dict[str, Any], key: str, value: Any, node: _Node) -> None:
    """One member of the patch: ``null`` deletes, a new member or one of another type is taken from
    the patch (``$patch`` and ``null`` stripped), maps and lists of the same type merge."""
    delete_list = key.startswith(_DELETE_FROM_PRIMITIVE_LIST)
    if delete_list:
        key = _directive_target(key, _DELETE_FROM_PRIMITIVE_LIST, _BAD_PRIMITIVE_LIST) or key
    if value is None:
        result.pop(key, None)
        return
    if key not in result or _go_type(result[key]) != _go_type(value):
        if not delete_list:  # a deletion from a list that isn't there changes nothing
            _take(result, key, value)
        return
    if isinstance(value, dict):
        child, meta = node.field(key)
        replace = meta.strategy() == _REPLACE
        result[key] = value if replace else _merge_map(result[key], value, child)
    elif isinstance(value, list):
        child, meta = node.field(key)
        result[key] = _merge_list_field(
            result[key], value, child.items(), meta.strategy(), meta.merge_key, delete_list
        )
    else:
        result[key] = value


def _take(result: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` to a value from the patch with its ``null`` members and ``$patch`` maps removed;
    a value that is itself a ``$patch`` map leaves the member out."""
    cleaned, keep = _clean(value, drop_nulls=True)
    if keep:
        result[key] = cleaned
    else:
        result.pop(key, None)


def _clean(value: Any, *, drop_nulls: bool) -> tuple[Any, bool]:
    """``discardNullValuesFromPatch`` (with ``drop_nulls``) then ``removeDirectives``: a copy of
    ``value`` without maps holding ``$patch``, and whether ``value`` itself is kept."""
    if isinstance(value, dict):
        entries = {k: v for k, v in value.items() if v is not None} if drop_nulls else value
        if _DIRECTIVE in entries:
            return None, False
        cleaned = {}
        for key, member in entries.items():
            member, keep = _clean(member, drop_nulls=drop_nulls)
            if keep:
                cleaned[key] = member
        return cleaned, True
    if isinstance(value, list):
        items = (_clean(item, drop_nulls=drop_nulls) for item in value)
        return [item for item, keep in items if keep], True
    return value, True


def _directive_target(key: str, prefix: str, error: str) -> str:
    """``extractKey``: the field a ``<prefix>/<field>`` directive applies to."""
    head, slash, field = key.partition("/")
    if not slash or head != prefix:
        raise PatchError(error, 400)
    return field


# --- $setElementOrder --------------------------------------------------------------------------------


def _set_element_orders(result: dict[str, Any], pending: dict[str, Any], node: _Node) -> None:
    """``mergePatchIntoOriginal``: merge each list that has a ``$setElementOrder/<field>`` now, and
    order it: the directive's order first, then the patch list's, then the stored list's."""
    for key in [k for k in pending if k.startswith(_SET_ELEMENT_ORDER)]:
        order = pending.pop(key)
        if not isinstance(order, list):
            raise _bad_arg_type(_LIST, order)
        field = _directive_target(key, _SET_ELEMENT_ORDER, _BAD_SET_ELEMENT_ORDER)
        _order_field(result, pending, field, order, node)


def _order_field(
    result: dict[str, Any], pending: dict[str, Any], field: str, order: list[Any], node: _Node
) -> None:
    """Merge and order one list. The stored order kube sorts by is its own view of the stored list
    *after* merging: Go slices share their array, and merging shifts deleted items out of it and
    appends new ones into it in place (see :func:`_list_directives`), so ``stored`` follows suit."""
    current = _list_member(result, field)
    patched = _list_member(pending, field)
    child, meta = node.field(field)
    strategy, merge_key = meta.strategy(), meta.merge_key
    _check_order(patched or [], order, merge_key)
    if current is None and patched is None:
        return
    stored = list(current or [])
    if patched is None:
        merged = stored
    elif current is None:
        merged = _clean(patched, drop_nulls=False)[0]
    else:
        merged = _merge_list_field(
            current, patched, child.items(), strategy, merge_key, False, stored
        )
    in_order, server_only = _partition(merged, order, merge_key)
    kind = _element_kind(stored, patched or [])
    result[field] = _normalize(in_order, server_only, order, stored, merge_key, kind)
    pending.pop(field, None)


def _list_member(members: Mapping[str, Any], field: str) -> list[Any] | None:
    """The list under ``field``, ``None`` when absent; present but not a list fails."""
    if field not in members:
        return None
    value = members[field]
    if not isinstance(value, list):
        raise _bad_arg_type(_LIST, value)
    return value


def _check_order(patched: list[Any], order: list[Any], merge_key: str) -> None:
    """``validatePatchWithSetOrderList``: the patch list's items (deletions aside) must appear in
    the ``$setElementOrder`` list, in the same relative order."""
    if not order or not patched:
        return
    items = patched
    if merge_key:
        for item in patched:
            if not isinstance(item, dict):
                raise _bad_arg_type(_MAP, item)
        items = [item for item in patched if item.get(_DIRECTIVE) != _DELETE]
    at = seen = 0
    while at < len(items) and seen < len(order):
        if isinstance(items[at], dict) and _DIRECTIVE in items[at]:
            at += 1
            continue
        if _merge_key_equal(items[at], order[seen], merge_key):
            at += 1
        seen += 1
    if at < len(items) and seen >= len(order):
        raise PatchError(
            f"The order in patch list:\n{_go_format(patched)}\n doesn't match "
            f"{_SET_ELEMENT_ORDER} list:\n{_go_format(order)}\n",
            _UNWRAPPED,
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    """``mergeKeyValueEqual``: scalars compare as they are, maps by their merge key."""
    if not merge_key:
        return _same(left, right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise _bad_arg_type(_MAP, item)
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
    return _same(left[merge_key], right[merge_key])


# --- lists -----------------------------------------------------------------------------------------


def _merge_list_field(
    current: list[Any],
    patch: list[Any],
    items: _Node,
    strategy: str,
    merge_key: str,
    delete_list: bool,
    stored: list[Any] | None = None,
) -> list[Any]:
    """``mergeSliceHandler``: lists are replaced unless their strategy is ``merge``; deletions
    from a list apply whatever its strategy."""
    if strategy == _MERGE or delete_list:
        return _merge_list(current, patch, items, merge_key, delete_list, stored)
    return patch


def _merge_list(
    original: list[Any],
    patch: list[Any],
    items: _Node,
    merge_key: str,
    delete_list: bool,
    stored: list[Any] | None = None,
) -> list[Any]:
    """``mergeSlice``: scalars are a set union (or difference, for ``$deleteFromPrimitiveList``),
    maps merge by ``merge_key`` after ``$patch: delete|replace`` items are applied; then the patch's
    items take the patch's order and the other items keep their places as far as possible.

    ``stored``, when given, is a copy of ``original`` standing for the caller's Go slice, which
    merging a list of maps changes in place as kube does. The union of scalars is taken to leave it
    alone: kube's ``append`` reallocates there, as the apiserver's stored lists have no spare room.
    """
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != _MAP:
        if delete_list:
            deleted = {_hash_key(item) for item in patch}
            return [item for item in original if _hash_key(item) not in deleted]
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise PatchError(f"cannot merge lists without merge key for {items.name()}", _UNWRAPPED)
        original, patch, shared = _list_directives(original, patch, merge_key, stored)
        merged = _merge_items(original, patch, merge_key, items, stored if shared else None)
    in_patch, server_only = _partition(merged, patch, merge_key)
    return _normalize(in_patch, server_only, patch, original, merge_key, kind)


def _list_directives(
    original: list[Any], patch: list[Any], merge_key: str, stored: list[Any] | None
) -> tuple[list[Any], list[Any], bool]:
    """``mergeSliceWithSpecialElements``: apply the ``$patch`` items. ``delete`` removes every item
    with that merge key value, ``replace`` makes the rest of the patch list the whole list.

    Returns the list to merge into, the patch's other items, and whether that list is still
    ``original``'s Go array (not after ``replace``). Each deletion is Go's
    ``append(s[:i], s[i+1:]...)``: the items after it move down one place in the shared array,
    whose last place keeps its old item; ``stored`` shows that array."""
    kept = list(original)
    plain: list[Any] = []
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            while (at := _find(kept, merge_key, item[merge_key])) is not None:
                del kept[at]
                if stored is not None:
                    stored[at : len(kept)] = stored[at + 1 : len(kept) + 1]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise PatchError("merging lists cannot yet be specified in the patch", _UNWRAPPED)
        else:
            raise _bad_patch_type(directive, item)
    return (plain, [], False) if replace else (kept, plain, True)


def _merge_items(
    original: list[Any],
    patch: list[Any],
    merge_key: str,
    items: _Node,
    stored: list[Any] | None,
) -> list[Any]:
    """``mergeSliceWithoutSpecialElements``: each patch item merges into the first item with its
    merge key value (including items the patch added before it) or is appended. Go appends into
    the shared array while it has room: the places deletions freed in ``stored``."""
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        at = _find(merged, merge_key, item[merge_key])
        if at is not None:
            merged[at] = _merge_map(merged[at], item, items)
            continue
        if stored is not None and len(merged) < len(stored):
            stored[len(merged)] = item
        merged.append(item)
    return merged


def _find(items: list[Any], merge_key: str, value: Any) -> int | None:
    """``findMapInSliceBasedOnKeyValue``."""
    for at, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatchError(f"value for key {at} is not a map", _UNWRAPPED)
        if merge_key in item and _same(item[merge_key], value):
            return at
    return None


def _deduplicate(values: list[Any]) -> list[Any]:
    """``deduplicateScalars``, which moves the last item into each duplicate's place."""
    values = list(values)
    last = len(values) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if _same(values[i], values[j]):
                values[j] = values[last]
                del values[last]
                last -= 1
            else:
                j += 1
        i += 1
    return values


def _element_kind(*lists: list[Any]) -> str:
    """``sliceElementType``: the one Go type of all the items."""
    kind: str | None = None
    for items in lists:
        for item in items:
            current = _go_type(item)
            if kind is None:
                if current == _LIST:
                    raise PatchError("lists of lists are not supported", 422)
                kind = current
            elif current != kind:
                raise PatchError(
                    f"list element types are not identical: {_go_format(list(lists))}", _UNWRAPPED
                )
    if kind is None:
        raise PatchError("no elements in any of the given slices", _UNWRAPPED)
    return kind


# --- ordering ----------------------------------------------------------------------------------------


def _partition(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """``partitionPrimitivesByPresentInList`` / ``partitionMapsByPresentInList``: the items of
    ``merged`` found in ``by``, and the others."""
    found: list[Any] = []
    rest: list[Any] = []
    if not merge_key:
        wanted = {_hash_key(item) for item in by}
        for item in merged:
            (found if _hash_key(item) in wanted else rest).append(item)
        return found, rest
    for item in merged:
        if not isinstance(item, dict):
            raise _bad_arg_type(_MAP, item)
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        (found if _find(by, merge_key, item[merge_key]) is not None else rest).append(item)
    return found, rest


def _normalize(
    in_patch: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: str,
) -> list[Any]:
    """``normalizeElementOrder``: sort the patch's items by the patch order and the others by the
    stored order, then interleave them by the stored order."""
    in_patch = _sort_like(in_patch, patch_order, merge_key, kind)
    server_only = _sort_like(server_only, server_order, merge_key, kind)
    return _interleave(server_only, in_patch, server_order, merge_key, kind)


def _sort_like(items: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """``normalizeSliceOrder``: a stable sort by position in ``order``, ``$patch: delete`` items last."""
    deleted: list[Any] = []
    if kind == _MAP:
        for item in (*items, *order):
            if not isinstance(item, dict):
                raise _bad_arg_type(_MAP, item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
        deleted = [item for item in items if item.get(_DIRECTIVE) == _DELETE]
        items = [item for item in items if item.get(_DIRECTIVE) != _DELETE]
    ranked = [(_index(order, item, merge_key, kind), item) for item in items]
    _go_stable_sort(ranked, _before)
    return [item for _, item in ranked] + deleted


def _before(left: tuple[int, Any], right: tuple[int, Any]) -> bool:
    """kube's "less": by position when both are in the order list, otherwise always true."""
    if left[0] >= 0 and right[0] >= 0:
        return left[0] < right[0]
    return True


def _interleave(
    left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, kind: str
) -> list[Any]:
    """``mergeSortedSlice``: take from ``left`` (stored-only items) while it comes first in the
    stored order, otherwise from ``right`` (the patch's items)."""
    merged: list[Any] = []
    i = j = 0
    while i < len(left) and j < len(right):
        at_left = _index(server_order, left[i], merge_key, kind)
        at_right = _index(server_order, right[j], merge_key, kind)
        if at_left >= 0 and at_right >= 0 and at_left < at_right:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def _index(items: list[Any], value: Any, merge_key: str, kind: str) -> int:
    """``index``: where ``value`` (by merge key, for maps) first occurs in ``items``, or -1."""
    if kind == _MAP:
        wanted = value.get(merge_key) if isinstance(value, dict) else None
        for at, item in enumerate(items):
            if _same(item.get(merge_key) if isinstance(item, dict) else None, wanted):
                return at
        return -1
    return next((at for at, item in enumerate(items) if _same(item, value)), -1)


def _go_stable_sort(data: list[Any], less: Callable[[Any, Any], bool]) -> None:
    """Go's ``sort.SliceStable`` in place: insertion sort over blocks of 20, then SymMerge.

    kube's "less" is not a strict weak order when an item is missing from the order list, so any
    other stable sort could order such items differently."""
    size = len(data)
    block = 20
    start = 0
    while start + block <= size:
        _insertion_sort(data, start, start + block, less)
        start += block
    _insertion_sort(data, start, size, less)
    while block < size:
        start = 0
        while start + 2 * block <= size:
            _sym_merge(data, start, start + block, start + 2 * block, less)
            start += 2 * block
        if start + block < size:
            _sym_merge(data, start, start + block, size, less)
        block *= 2


def _insertion_sort(data: list[Any], a: int, b: int, less: Callable[[Any, Any], bool]) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less(data[j], data[j - 1]):
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1


def _sym_merge(data: list[Any], a: int, m: int, b: int, less: Callable[[Any, Any], bool]) -> None:
    """Go's ``symMerge``: merge the sorted runs ``data[a:m]`` and ``data[m:b]`` in place."""
    if m - a == 1:
        i, j = m, b
        while i < j:
            h = (i + j) // 2
            i, j = (h + 1, j) if less(data[h], data[a]) else (i, h)
        for k in range(a, i - 1):
            data[k], data[k + 1] = data[k + 1], data[k]
        return
    if b - m == 1:
        i, j = a, m
        while i < j:
            h = (i + j) // 2
            i, j = (h + 1, j) if not less(data[m], data[h]) else (i, h)
        for k in range(m, i, -1):
            data[k], data[k - 1] = data[k - 1], data[k]
        return
    mid = (a + b) // 2
    n = mid + m
    start, r = (n - b, mid) if m > mid else (a, m)
    p = n - 1
    while start < r:
        c = (start + r) // 2
        start, r = (c + 1, r) if not less(data[p - c], data[c]) else (start, c)
    end = n - start
    if start < m < end:
        _rotate(data, start, m, end)
    if a < start < mid:
        _sym_merge(data, a, start, mid, less)
    if mid < end < b:
        _sym_merge(data, mid, end, b, less)


def _rotate(data: list[Any], a: int, m: int, b: int) -> None:
    """Go's ``rotate``: swap the blocks ``data[a:m]`` and ``data[m:b]`` by block swaps."""
    i, j = m - a, b - m
    while i != j:
        if i > j:
            _swap_range(data, m - i, m, j)
            i -= j
        else:
            _swap_range(data, m - i, m + j - i, i)
            j -= i
    _swap_range(data, m - i, m, i)


def _swap_range(data: list[Any], a: int, b: int, n: int) -> None:
    for k in range(n):
        data[a + k], data[b + k] = data[b + k], data[a + k]


# --- Go semantics and messages -------------------------------------------------------------------------


def _same(left: Any, right: Any) -> bool:
    """Go's ``==`` on decoded JSON: same type and value (``1`` is not ``1.0``, ``true`` not ``1``)."""
    return type(left) is type(right) and bool(left == right)


def _hash_key(value: Any) -> tuple[type, Any]:
    """A set key with Go's equality; kube panics (answering 500) on maps and lists as map keys."""
    if isinstance(value, dict | list):
        raise PatchError(f"runtime error: hash of unhashable type {_go_type(value)}", _UNWRAPPED)
    return type(value), value


def _go_type(value: Any) -> str:
    """``reflect.TypeOf`` of the value apimachinery's JSON decoding gives (ints are int64)."""
    for python_type, go_type in _GO_TYPES:
        if isinstance(value, python_type):
            return go_type
    return _NIL


def _go_format(value: Any, verb: str = "v") -> str:
    """fmt's ``%v`` (or ``%s``) of decoded JSON: ``map[k:v ...]`` with sorted keys, ``[a b]``."""
    if isinstance(value, dict):
        members = (f"{key}:{_go_format(value[key], verb)}" for key in sorted(value))
        return f"map[{' '.join(members)}]"
    if isinstance(value, list):
        return f"[{' '.join(_go_format(item, verb) for item in value)}]"
    if isinstance(value, str):
        return value
    if value is None:
        return _NIL if verb == "s" else "<nil>"
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = _go_float(value) if isinstance(value, float) else str(value)
    return f"%!s({_go_type(value)}={text})" if verb == "s" else text


def _go_float(value: float) -> str:
    """strconv's shortest ``%g``, as fmt prints a float64: exponent form below 1e-4 and from 1e6."""
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    point = len(digit_tuple) + int(exponent)  # position of the decimal point after the digits
    prefix = "-" if sign else ""
    if digits == "0":
        return prefix + "0"
    if not -4 <= point - 1 < 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if point - 1 < 0 else '+'}{abs(point - 1):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def _json_kind(value: Any) -> str:
    """The JSON kind encoding/json names in "cannot unmarshal <kind> into Go value ..."."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "array"


def _no_merge_key(item: Mapping[str, Any], merge_key: str) -> PatchError:
    """``mergepatch.ErrNoMergeKey``."""
    return PatchError(
        f"map: {_go_format(dict(item))} does not contain declared merge key: {merge_key}",
        _UNWRAPPED,
    )


def _bad_arg_type(expected: str, actual: Any) -> PatchError:
    """``mergepatch.ErrBadArgType``."""
    return PatchError(f"expected a {expected}, but received a {_go_type(actual)}", _UNWRAPPED)


def _bad_patch_type(directive: Any, item: Mapping[str, Any]) -> PatchError:
    """``mergepatch.ErrBadPatchType``."""
    return PatchError(
        f"unknown patch type: {_go_format(directive, 's')} in map: {_go_format(dict(item))}",
        _UNWRAPPED,
    )
