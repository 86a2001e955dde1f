"""The object walks of structured-merge-diff ``typed``: field sets, comparisons, apply merges, pruning.

Ports of typed/tofieldset.go (``ToFieldSet``), typed/compare.go (``Compare``), typed/merge.go (``Merge``
with ``ruleKeepRHS``) and the prune step of merge/update.go (``prune``, ``addBackOwnedItems``,
``addBackDanglingItems``, ``EnsureNamedFieldsAreMembers``), over plain JSON values and the type tree of
:mod:`apiserver.fieldmanager.typeinfo`. Sets come out in FieldsV1 shape (:mod:`.fieldpath`).

Every walk is linear in the part of the objects it has to look at, and shortcuts the rest: subtrees that
are the same object, or equal, are not descended into, and merges and prunes copy only the containers on
the way to a change, sharing everything else with their inputs (so callers must not mutate results in
place unless they own the inputs).

Root-level rules of the kube field manager (stripmeta.go) are applied here, not afterwards, so the big
fields nobody can own are never walked: ``apiVersion``, ``kind`` and the system fields of ``metadata``
(``name``, ``namespace``, ``uid``, ``resourceVersion``, ``generation``, ``creationTimestamp``,
``managedFields``, ``selfLink``, ``clusterName``) and ``metadata`` itself are never in a set, and
top-level ``ignored`` fields (the strategy's reset fields, e.g. ``status`` when there is a status
subresource) are left out like ``Comparison.ExcludeFields``/``RecursiveDifference`` leave them out.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Final

from apiserver.fieldmanager.fieldpath import (
    SELF,
    Node,
    has_children,
    is_member,
    path_string,
    pe_string,
)
from apiserver.fieldmanager.typeinfo import LEAF, MAP, OBJECT_META, SET, TypeNode
from apiserver.schema.causes import go_json

__all__ = [
    "METADATA",
    "STRIPPED_META",
    "STRIPPED_ROOT",
    "TypedError",
    "compare_objects",
    "field_set_of",
    "first_index",
    "item_pes",
    "merge_objects",
    "prune_disowned",
    "root_skip",
]

STRIPPED_ROOT: Final = frozenset({"apiVersion", "kind"})
STRIPPED_META: Final = frozenset(
    {
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    }
)
METADATA: Final = "metadata"
_F_METADATA: Final = "f:metadata"


class TypedError(ValueError):
    """A value SMD cannot type (an unkeyable list item, a duplicate key in an applied config).

    ``message`` is SMD's ``ValidationError`` text: the path of the list, then the problem.
    """

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.reversed_path: list[str] = []

    @property
    def message(self) -> str:
        path = path_string(tuple(reversed(self.reversed_path)))
        return f"{path}: {self.detail}" if path else self.detail

    def __str__(self) -> str:
        return self.message


class _Absent:
    __slots__ = ()


_ABSENT: Final = _Absent()

# Printable ASCII but the characters Go escapes ("\<>&): a string of these alone is quoted as it is.
# (A match over an allowed class is several times faster than searching for the escaped ones.)
_PLAIN: Final = re.compile(r"[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\x7e]*")


def _json(value: Any) -> str:
    kind = type(value)
    if kind is str and _PLAIN.fullmatch(value):
        return f'"{value}"'
    if kind is int:
        return str(value)
    return go_json(value)


def _item_pe(t: TypeNode, index: int, item: Any) -> str:
    # typed/helpers.go listItemToPathElement for associative lists.
    if t.list_kind == SET:
        if isinstance(item, str):
            return "v:" + _json(item)  # the common set: finalizers, tags
        if isinstance(item, dict):
            detail = "associative list without keys has an element that's a map type"
        elif isinstance(item, list):
            detail = "not supported: associative list with lists as elements"
        elif item is None:
            detail = "associative list without keys has an element that's an explicit null"
        else:
            return "v:" + _json(item)
        raise TypedError(f"element {index}: {detail}")
    if item is None:
        raise TypedError(f"element {index}: associative list with keys may not have a null element")
    if not isinstance(item, dict):
        raise TypedError(
            f"element {index}: associative list with keys may not have non-map elements"
        )
    keys = t.keys
    if len(keys) == 1:
        name = keys[0]
        value = item.get(name, _ABSENT)
        if value is _ABSENT:
            value = _key_default(t, index, name)
        return "k:{" + _json(name) + ":" + _json(value) + "}"
    parts = []
    for name in t.sorted_keys:
        value = item.get(name, _ABSENT)
        if value is _ABSENT:
            value = _key_default(t, index, name)
        parts.append(_json(name) + ":" + _json(value))
    return "k:{" + ",".join(parts) + "}"


def _key_default(t: TypeNode, index: int, name: str) -> Any:
    if name in t.key_defaults:
        return t.key_defaults[name]
    raise TypedError(
        f"element {index}: associative list with keys has an element that omits key field "
        f'"{name}" (and doesn\'t have default value)'
    )


def item_pes(t: TypeNode, items: list[Any]) -> list[str]:
    """The path element of every item of a granular list (raises :class:`TypedError`)."""
    return [_item_pe(t, i, item) for i, item in enumerate(items)]


def first_index(pes: list[str], strict: bool) -> dict[str, int]:
    """Where each path element first occurs; ``strict``: a repeated one raises :class:`TypedError`."""
    first: dict[str, int] = {}
    for i, pe in enumerate(pes):
        if pe in first:
            if strict:
                raise TypedError(f"duplicate entries for key {pe_string(pe)}")
            continue
        first[pe] = i
    return first


def _leaf_equal(a: Any, b: Any) -> bool:
    # value.Equals: numbers compare numerically, but a boolean never equals a number.
    return a is b or (a == b and isinstance(a, bool) == isinstance(b, bool))


# --- ToFieldSet ------------------------------------------------------------------------------------


def _fs_value(t: TypeNode, value: Any) -> Node | None:
    """The children of ``value``'s node, or ``None`` when ``value`` is owned as a whole."""
    how = t.how(value)
    if how == LEAF:
        return None
    if not value:
        return {}
    if how == MAP:
        return _fs_map(t, value, ())
    return _fs_list(t, value)


def _fs_map(t: TypeNode, value: dict[str, Any], skip: Collection[str]) -> Node:
    out: Node = {}
    for key, child in value.items():
        if key in skip:
            continue
        child_type, named = t.field(key)
        try:
            sub = _fs_value(child_type, child)
        except TypedError as err:
            err.reversed_path.append("f:" + key)
            raise
        if sub is None or (named and _owned_whole(child)):
            out["f:" + key] = {}
        elif named:
            # A declared field is not itself owned, only what is below it.
            if sub:
                out["f:" + key] = sub
        else:
            # A map entry is owned as an entry (tofieldset.go visitMapItems).
            if sub:
                sub[SELF] = {}
            out["f:" + key] = sub
    return out


def _owned_whole(value: Any) -> bool:
    """Whether a member is owned itself though its type is walked into: a null or an empty map, which
    has nothing below to own (tofieldset.go visitMapItems inserts the path of ``val.IsNull() ||
    (val.IsMap() && val.AsMap().Length() == 0)``), so that a manager that sets ``selector: {}`` owns it."""
    return value is None or (isinstance(value, dict) and not value)


def _fs_list(t: TypeNode, value: list[Any]) -> Node:
    item_type = t.item_type()
    pes = item_pes(t, value)
    first = first_index(pes, strict=True)
    out: Node = {}
    for pe, index in first.items():
        try:
            sub = _fs_value(item_type, value[index])
        except TypedError as err:
            err.reversed_path.append(pe)
            raise
        if sub:
            sub[SELF] = {}
            out[pe] = sub
        else:
            out[pe] = {}
    return out


def field_set_of(obj: dict[str, Any], root: TypeNode, ignored: Collection[str] = ()) -> Node:
    """``ToFieldSet`` of a whole object, without the stripped and ``ignored`` top-level fields.

    Raises :class:`TypedError` for a list item that has no key or a repeated key.
    """
    out = _fs_map(root, obj, root_skip(ignored))
    meta = obj.get(METADATA)
    if isinstance(meta, dict):
        try:
            sub = _fs_map(OBJECT_META, meta, STRIPPED_META)
        except TypedError as err:
            err.reversed_path.append(_F_METADATA)
            raise
        if sub:
            out[_F_METADATA] = sub
    return out


_skip_cache: dict[tuple[str, ...] | frozenset[str], frozenset[str]] = {}
_NOTHING_IGNORED: Final = STRIPPED_ROOT | {METADATA}
_CONTAINERS: Final = (dict, list)


def root_skip(ignored: Collection[str]) -> frozenset[str]:
    """The top-level members no set holds: the stripped ones, ``metadata`` (walked apart) and ``ignored``."""
    if not ignored:
        return _NOTHING_IGNORED
    key = ignored if isinstance(ignored, tuple) else frozenset(ignored)  # a tuple needs no set made
    skip = _skip_cache.get(key)
    if skip is None:
        skip = STRIPPED_ROOT | frozenset(ignored) | {METADATA}
        if len(_skip_cache) < 64:
            _skip_cache[key] = skip
    return skip


# --- Compare ---------------------------------------------------------------------------------------


def _all(t: TypeNode, value: Any) -> Node:
    """Every path of an added or removed ``value`` (compare.go: the leaves and, through
    ``postItemHook``, every granular node), as the node for ``value`` itself."""
    if t.leaf:
        return {}
    how = t.how(value)
    if how == LEAF or not value:
        return {}
    node = _all_children(t, how, value)
    node[SELF] = {}
    return node


def _all_children(t: TypeNode, how: int, value: Any) -> Node:
    if how == MAP:
        if t.leaf_values:
            return {"f:" + key: {} for key in value}
        fields = t.fields
        other = t.other
        return {"f:" + key: _all(fields.get(key) or other, child) for key, child in value.items()}
    item_type = t.item_type()
    pes = item_pes(t, value)
    if item_type.leaf:
        return {pe: {} for pe in pes}  # a repeated item keeps its first place, as below
    return {pe: _all(item_type, value[i]) for pe, i in first_index(pes, strict=False).items()}


def _cmp(
    t: TypeNode, pe: str, lhs: Any, rhs: Any, added: Node, modified: Node, removed: Node
) -> None:
    if t.leaf:
        if not _leaf_equal(lhs, rhs):
            modified[pe] = {}
        return
    if isinstance(lhs, _CONTAINERS) and lhs == rhs:
        # Equal containers (of one type, so of one shape): nothing below changed.
        return
    how = t.how(lhs)
    rhs_how = t.how(rhs)
    if how != rhs_how:
        # The value changed shape (only possible for untyped values): the node is modified, what was
        # below it removed and what is below it now added.
        modified[pe] = {}
        if how != LEAF and lhs:
            removed[pe] = _all_children(t, how, lhs)
        if rhs_how != LEAF and rhs:
            added[pe] = _all_children(t, rhs_how, rhs)
        return
    if how == LEAF or (not lhs and not rhs):
        # Leaves, and empty or null containers on both sides ("emptyPromoteToLeaf").
        if not _leaf_equal(lhs, rhs):
            modified[pe] = {}
        return
    sub_added: Node = {}
    sub_modified: Node = {}
    sub_removed: Node = {}
    if how == MAP:
        _cmp_map(t, lhs or {}, rhs or {}, sub_added, sub_modified, sub_removed, ())
    else:
        _cmp_list(t, lhs or [], rhs or [], sub_added, sub_modified, sub_removed)
    if sub_added:
        added[pe] = sub_added
    if sub_modified:
        modified[pe] = sub_modified
    if sub_removed:
        removed[pe] = sub_removed


def _cmp_map(
    t: TypeNode,
    lhs: dict[str, Any],
    rhs: dict[str, Any],
    added: Node,
    modified: Node,
    removed: Node,
    skip: Collection[str],
) -> None:
    fields = t.fields
    other = t.other
    for key, left in lhs.items():
        if key in skip:
            continue
        right = rhs.get(key, _ABSENT)
        if left is right:
            continue
        child_type = fields.get(key) or other
        if right is _ABSENT:
            removed["f:" + key] = _all(child_type, left)
        elif child_type.leaf:
            # What _cmp does first, without the call: the common scalar field or label.
            if not _leaf_equal(left, right):
                modified["f:" + key] = {}
        else:
            _cmp(child_type, "f:" + key, left, right, added, modified, removed)
    if rhs.keys() <= lhs.keys():
        return  # nothing added: the common update, spared a second pass
    for key, right in rhs.items():
        if key in lhs or key in skip:
            continue
        added["f:" + key] = _all(fields.get(key) or other, right)


def _cmp_list(
    t: TypeNode, lhs: list[Any], rhs: list[Any], added: Node, modified: Node, removed: Node
) -> None:
    item_type = t.item_type()
    left_first = first_index(item_pes(t, lhs), strict=False)
    right_first = first_index(item_pes(t, rhs), strict=False)
    for pe, i in left_first.items():
        j = right_first.get(pe)
        if j is None:
            removed[pe] = _all(item_type, lhs[i])
        elif lhs[i] is not rhs[j]:
            _cmp(item_type, pe, lhs[i], rhs[j], added, modified, removed)
    for pe, j in right_first.items():
        if pe not in left_first:
            added[pe] = _all(item_type, rhs[j])


def compare_objects(
    live: dict[str, Any], new: dict[str, Any], root: TypeNode, ignored: Collection[str] = ()
) -> tuple[Node, Node, Node]:
    """``Compare(live, new)``: the (added, modified, removed) sets, stripped and without ``ignored``.

    Raises :class:`TypedError` when a list item of either object cannot be keyed.
    """
    added: Node = {}
    modified: Node = {}
    removed: Node = {}
    _cmp_map(root, live, new, added, modified, removed, root_skip(ignored))
    live_meta = live.get(METADATA)
    new_meta = new.get(METADATA)
    if live_meta is not new_meta:
        meta_added: Node = {}
        meta_modified: Node = {}
        meta_removed: Node = {}
        _cmp_map(
            OBJECT_META,
            live_meta if isinstance(live_meta, dict) else {},
            new_meta if isinstance(new_meta, dict) else {},
            meta_added,
            meta_modified,
            meta_removed,
            STRIPPED_META,
        )
        if meta_added:
            added[_F_METADATA] = meta_added
        if meta_modified:
            modified[_F_METADATA] = meta_modified
        if meta_removed:
            removed[_F_METADATA] = meta_removed
    return added, modified, removed


# --- Merge -----------------------------------------------------------------------------------------


def _merge(t: TypeNode, lhs: Any, rhs: Any) -> Any:
    if lhs is rhs:
        return rhs
    how = t.how(rhs)
    if how == LEAF or how != t.how(lhs) or (not lhs and not rhs):
        return rhs
    if not rhs:
        return lhs
    if not lhs:
        return rhs
    if how == MAP:
        out = dict(lhs)
        for key, right in rhs.items():
            left = lhs.get(key, _ABSENT)
            out[key] = right if left is _ABSENT else _merge(t.field(key)[0], left, right)
        return out
    return _merge_list(t, lhs, rhs)


def _merge_list(t: TypeNode, lhs: list[Any], rhs: list[Any]) -> list[Any]:
    # merge.go visitListItems: items keep the live order, except that the items both sides have are
    # put in the applied order; applied-only items go after the live item they follow.
    item_type = t.item_type()
    right_order = item_pes(t, rhs)
    right_first = first_index(right_order, strict=True)
    left_pes = item_pes(t, lhs)
    left_first: dict[str, int] = {}
    left_extra: dict[str, list[int]] = {}
    left_order: list[str] = []
    for i, pe in enumerate(left_pes):
        if pe in left_first:
            left_extra.setdefault(pe, []).append(i)
        else:
            left_first[pe] = i
            left_order.append(pe)
    shared = [pe for pe in right_order if pe in left_first]
    shared_at = 0
    next_shared = shared[0] if shared else None
    out: list[Any] = []
    li = ri = 0
    n_left, n_right = len(left_order), len(right_order)
    while li < n_left or ri < n_right:
        if li < n_left and ri < n_right:
            pe = left_order[li]
            if pe == right_order[ri]:
                out.append(_merge(item_type, lhs[left_first[pe]], rhs[right_first[pe]]))
                li += 1
                ri += 1
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
                continue
            if pe in right_first and next_shared is not None and next_shared != pe:
                li += 1  # a shared item, placed when its turn in the applied order comes
                continue
        if li < n_left:
            pe = left_order[li]
            if pe not in right_first:
                out.append(lhs[left_first[pe]])
                out.extend(lhs[i] for i in left_extra.get(pe, ()))
                li += 1
                continue
        if ri < n_right:
            pe = right_order[ri]
            left = left_first.get(pe)
            right = rhs[right_first[pe]]
            out.append(right if left is None else _merge(item_type, lhs[left], right))
            ri += 1
            if next_shared is not None and next_shared == pe:
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
            continue
        li += 1  # unreachable for well-formed input; guarantees progress
    return out


def merge_objects(live: dict[str, Any], applied: dict[str, Any], root: TypeNode) -> dict[str, Any]:
    """``live.Merge(applied)``: maps merged key by key, list-type maps and sets merged by item,
    everything else (scalars, atomic lists and maps) taken from ``applied``."""
    result = _merge(root, live, applied)
    assert isinstance(result, dict)
    return result


# --- Prune -----------------------------------------------------------------------------------------
# merge/update.go prune: remove what the applier applied last time and not this time, unless someone
# else owns it. Literally, with M the merged object, L the applier's previous set, O the union of every
# manager's set (the applier's new one included), S(x) = ToFieldSet(x) and every set passed through
# EnsureNamedFieldsAreMembers (a declared field that leads to owned fields counts as owned):
#   P2 = M without the topmost paths of D = {p in S(M) : p or an ancestor is in L, p not in O}
#   result = M without the topmost paths of R = {p in L : p in S(M), p not in S(P2)}
# A path is missing from S(P2) when P2 removed it, and also when it is a declared field that P2 left
# without any field below it (ToFieldSet does not list empty structs): such a field goes too, whole.
# The walk below decides all of this per node in one pass, following L only (plus, where a declared
# field's fate depends on it, a look at its other children), so it costs what the applier owned.

_NORMAL: Final = 0
_ROOT: Final = 1
_META: Final = 2


def _has_fields(t: TypeNode, value: Any) -> bool:
    """Whether ``ToFieldSet(value)`` is non-empty."""
    how = t.how(value)
    if how == LEAF:
        return True
    if not value:
        return False
    if how != MAP:
        return True
    for key, child in value.items():
        child_type, named = t.field(key)
        if _in_field_set(child_type, named, child):
            return True
    return False


def _in_field_set(t: TypeNode, named: bool, value: Any) -> bool:
    """Whether a member of type ``t`` holding ``value`` puts its path, or one below, in ``ToFieldSet``: a
    map entry always does, a declared field when it is owned whole or leads to a field."""
    return not named or t.how(value) == LEAF or _owned_whole(value) or _has_fields(t, value)


def _unchanged(dropped: bool, last_child: Node, current: Node | None, pe: str) -> bool:
    """Whether the applier applies exactly what it applied last time below ``pe`` (and nothing above
    is being removed), so nothing below can be pruned: the common re-apply skips the walk."""
    if dropped or current is None:
        return False
    current_child = current.get(pe)
    return current_child is not None and (
        current_child is last_child or current_child == last_child
    )


class _Prune:
    """The state of one prune: every manager's set and the applier's new one, at the current node."""

    __slots__ = ("current", "dropped", "owners", "under_last")

    def __init__(
        self, owners: list[Node], current: Node | None, under_last: bool, dropped: bool
    ) -> None:
        self.owners = owners
        self.current = current
        self.under_last = under_last  # the node or an ancestor is in L
        self.dropped = dropped  # the node or an ancestor is in D (removed by P2)

    def child(self, pe: str, in_last: bool, dropped: bool) -> _Prune:
        return _Prune(
            [o[pe] for o in self.owners if pe in o],
            self.current.get(pe) if self.current is not None else None,
            self.under_last or in_last,
            dropped,
        )


def _prune_map(
    t: TypeNode, value: dict[str, Any], last: Node, state: _Prune, context: int
) -> tuple[dict[str, Any], bool]:
    """``value`` pruned, and whether ``value`` as P2 leaves it still has fields."""
    out: dict[str, Any] | None = None
    fields_left = False
    survivor = False  # a member that P2 keeps
    visited: set[str] = set()
    for pe, last_child in last.items():
        if pe == SELF or not pe.startswith("f:"):
            continue
        key = pe[2:]
        child = value.get(key, _ABSENT)
        if child is _ABSENT:
            continue
        visited.add(key)
        if context == _META and key in STRIPPED_META:
            survivor = True
            continue
        child_type, named = t.field(key)
        child_is_leaf = child_type.how(child) == LEAF
        in_fields = _in_field_set(child_type, named, child)
        # A map the applier owned whole when it was empty guards nothing others added below it.
        guarded = child_is_leaf or has_children(last_child) or not child
        if guarded and _unchanged(state.dropped, last_child, state.current, pe):
            fields_left = fields_left or in_fields
            survivor = True
            continue
        owners = [o[pe] for o in state.owners if pe in o]
        owned = any(is_member(o) for o in owners) or (named and bool(owners))
        in_last = named or is_member(last_child)
        dropped = state.dropped or (in_fields and (state.under_last or in_last) and not owned)
        is_metadata = context == _ROOT and key == METADATA
        if has_children(last_child) and child and not child_is_leaf:
            pruned, child_fields = _prune_value(
                child_type,
                child,
                last_child,
                state.child(pe, in_last, dropped),
                _META if is_metadata else _NORMAL,
            )
        else:
            pruned = child
            # Nothing of L below: P2 keeps what is below if it is out of L's reach, or owned.
            child_fields = (
                child_is_leaf or _owned_fields(child_type, child, owners)
                if state.under_last or in_last
                else in_fields
            )
        survivor = survivor or not (dropped and in_fields)
        # In S(P2): survived P2, and (for a declared field) still leads to a field or is an empty map.
        in_p2 = not dropped and (not named or child_is_leaf or child_fields)
        if in_last and in_fields and not in_p2 and not is_metadata:
            if out is None:
                out = dict(value)
            del out[key]
            continue
        fields_left = fields_left or in_p2
        if pruned is not child:
            if out is None:
                out = dict(value)
            if context == _META and not pruned:
                del out[key]  # ObjectMeta omits empty labels, annotations, finalizers...
            else:
                out[key] = pruned
    unvisited = [(key, child) for key, child in value.items() if key not in visited]
    if not fields_left and not state.dropped:
        fields_left = any(_keeps_fields(t, key, child, state) for key, child in unvisited)
        survivor = survivor or any(_survives(t, key, child, state) for key, child in unvisited)
    # A map P2 empties is owned whole in S(P2), as a declared field.
    return (value if out is None else out), fields_left or not survivor


def _keeps_fields(t: TypeNode, key: str, child: Any, state: _Prune) -> bool:
    """Whether member ``key`` (not in L) of a node P2 keeps still has a field in P2: outside L's
    reach it is untouched; within it (below a path of L) it survives only where someone owns it."""
    child_type, named = t.field(key)
    if not state.under_last:
        return _in_field_set(child_type, named, child)
    pe = "f:" + key
    owners = [o[pe] for o in state.owners if pe in o]
    if not (any(is_member(o) for o in owners) or (named and owners)):
        return False
    return not named or child_type.how(child) == LEAF or _owned_fields(child_type, child, owners)


def _survives(t: TypeNode, key: str, child: Any, state: _Prune) -> bool:
    """Whether P2 keeps member ``key`` (not in L) of a node it keeps: outside L's reach, or owned, or
    holding nothing ``ToFieldSet`` names (such as an empty list), which no set can remove."""
    if not state.under_last:
        return True
    child_type, named = t.field(key)
    pe = "f:" + key
    owners = [o[pe] for o in state.owners if pe in o]
    owned = any(is_member(o) for o in owners) or (named and bool(owners))
    return owned or not _in_field_set(child_type, named, child)


def _owned_fields(t: TypeNode, value: Any, owners: list[Node]) -> bool:
    """Whether an owned ``value`` below a path of L, once P2 removed what nobody owns, still keeps a
    field, or is a map left empty (then owned whole, as a declared field)."""
    how = t.how(value)
    if how == LEAF or _owned_whole(value):
        return True
    if not value:
        return False
    if how != MAP:
        return any(any(is_member(o[pe]) for o in owners if pe in o) for pe in item_pes(t, value))
    emptied = True
    for key, child in value.items():
        child_type, named = t.field(key)
        pe = "f:" + key
        child_owners = [o[pe] for o in owners if pe in o]
        if not (any(is_member(o) for o in child_owners) or (named and child_owners)):
            emptied = emptied and _in_field_set(child_type, named, child)
            continue
        emptied = False
        if not named or child_type.how(child) == LEAF:
            return True
        if _owned_fields(child_type, child, child_owners):
            return True
    return emptied


def _prune_list(t: TypeNode, value: list[Any], last: Node, state: _Prune) -> tuple[list[Any], bool]:
    item_type = t.item_type()
    pes = item_pes(t, value)
    first = first_index(pes, strict=False)
    remove: set[str] = set()
    replace: dict[int, Any] = {}
    survivors: set[str] = set()  # items along L that P2 keeps
    for pe, last_child in last.items():
        index = first.get(pe)
        if index is None:
            continue
        if _unchanged(state.dropped, last_child, state.current, pe):
            survivors.add(pe)
            continue
        owners = [o[pe] for o in state.owners if pe in o]
        in_last = is_member(last_child)
        dropped = state.dropped or (
            (state.under_last or in_last) and not any(is_member(o) for o in owners)
        )
        if dropped and in_last:
            remove.add(pe)
            continue
        if not dropped:
            survivors.add(pe)
        item = value[index]
        if has_children(last_child) and item and item_type.how(item) != LEAF:
            pruned, _ = _prune_value(
                item_type, item, last_child, state.child(pe, in_last, dropped), _NORMAL
            )
            if pruned is not item:
                replace[index] = pruned
    # Items are fields of their own: the list keeps fields in P2 if an item survives P2, which an
    # item below a path of L only does when someone owns it.
    fields_left = not state.dropped and any(
        pe in survivors
        or not state.under_last
        or any(is_member(o[pe]) for o in state.owners if pe in o)
        for pe in first
    )
    if not remove and not replace:
        return value, fields_left
    kept = [
        replace.get(i, item)
        for i, (pe, item) in enumerate(zip(pes, value, strict=True))
        if pe not in remove
    ]
    return kept, fields_left


def _prune_value(
    t: TypeNode, value: Any, last: Node, state: _Prune, context: int
) -> tuple[Any, bool]:
    if isinstance(value, dict):
        return _prune_map(t, value, last, state, context)
    if isinstance(value, list):
        return _prune_list(t, value, last, state)
    return value, True


def prune_disowned(
    merged: dict[str, Any], root: TypeNode, last: Node, owners: list[Node], current: Node
) -> dict[str, Any]:
    """Remove from ``merged`` what the applier owned (``last``) and no set in ``owners`` (every
    manager's, the applier's new one, ``current``, included) owns any more.

    ``metadata`` and its system fields are never removed, and containers of ``metadata`` left empty
    are dropped as ``ObjectMeta`` would; other containers left empty stay (``{}``/``[]``), as SMD
    keeps them since it stopped turning them into ``null``.
    """
    pruned, _ = _prune_map(root, merged, last, _Prune(owners, current, False, False), _ROOT)
    return pruned
