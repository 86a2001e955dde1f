"""The one-pass prune of apiserver.fieldmanager.typed against a literal transcription of
sigs.k8s.io/structured-merge-diff merge/update.go ``prune``:

    pruned := merged.RemoveItems(ENF(lastSet))
    pruned  = merged.RemoveItems(ENF(S(merged)) - (ENF(S(pruned)) + ENF(managed)))   // addBackOwnedItems
    pruned  = merged.RemoveItems((ENF(S(merged)) - ENF(S(pruned))) & ENF(lastSet))   // addBackDanglingItems

with ``S`` = ToFieldSet, ``ENF`` = Set.EnsureNamedFieldsAreMembers and typed/remove.go ``RemoveItems``
(keeping emptied lists and maps, as SMD does since it stopped turning them into null), on random
objects and ownership.
"""

from __future__ import annotations

from typing import Any

from fm_schemas import WIDGET
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver.fieldmanager.fieldpath import (
    SELF,
    Node,
    c_difference,
    c_intersection,
    c_union,
    has_children,
    is_member,
    normalize,
)
from apiserver.fieldmanager.typed import (
    compare_objects,
    field_set_of,
    item_pes,
    merge_objects,
    prune_disowned,
)
from apiserver.fieldmanager.typeinfo import LEAF, TypeNode, compile_types

ROOT = compile_types(WIDGET)


def enf(t: TypeNode, node: Node) -> Node:
    """Set.EnsureNamedFieldsAreMembers on the children of a node of type ``t``."""
    out: Node = {}
    for pe, child in node.items():
        if pe == SELF:
            continue
        named = pe.startswith("f:") and pe[2:] in t.fields
        child_type = t.field(pe[2:])[0] if pe.startswith("f:") else t.item_type()
        sub = enf(child_type, child)
        member = is_member(child) or named
        result = normalize({**sub} if sub else {}, member)
        if result is not None:
            out[pe] = result
    return out


def remove_items(t: TypeNode, value: Any, to_remove: Node) -> Any:
    """typed/remove.go removeItemsWithSchema (shouldExtract=false)."""
    if isinstance(value, dict) and value and t.how(value) != LEAF:
        out = {}
        for key, child in value.items():
            pe = "f:" + key
            sub = to_remove.get(pe)
            if sub is not None and is_member(sub):
                continue
            if sub is not None and has_children(sub):
                child = remove_items(t.field(key)[0], child, sub)
            out[key] = child
        return out
    if isinstance(value, list) and value and t.how(value) != LEAF:
        item_type = t.item_type()
        out_items = []
        for pe, item in zip(item_pes(t, value), value, strict=True):
            sub = to_remove.get(pe)
            if sub is not None and is_member(sub):
                continue
            if sub is not None and has_children(sub):
                item = remove_items(item_type, item, sub)
            out_items.append(item)
        return out_items
    return value


def literal_prune(merged: dict[str, Any], last: Node, owners: list[Node]) -> Any:
    def s(obj: Any) -> Node:
        return enf(ROOT, field_set_of(obj, ROOT))

    last_enf = enf(ROOT, last)
    managed: Node = {}
    for owner in owners:
        managed = c_union(managed, owner)
    managed = enf(ROOT, managed)
    pruned = remove_items(ROOT, merged, last_enf)
    merged_set = s(merged)
    pruned = remove_items(ROOT, merged, c_difference(merged_set, c_union(s(pruned), managed)))
    return remove_items(ROOT, merged, c_intersection(c_difference(merged_set, s(pruned)), last_enf))


names = st.sampled_from(["a", "b", "c"])
values = st.sampled_from(["1", "2"])
containers = st.lists(
    st.fixed_dictionaries(
        {"name": names},
        optional={"image": values, "env": st.dictionaries(names, values, max_size=2)},
    ),
    max_size=3,
    unique_by=lambda c: c["name"],
)
specs = st.fixed_dictionaries(
    {},
    optional={
        "image": values,
        "replicas": st.integers(0, 2),
        "config": st.dictionaries(names, values, max_size=3),
        "template": st.fixed_dictionaries({}, optional={"a": values, "b": values}),
        "tags": st.lists(names, max_size=3, unique=True),
        "args": st.lists(values, max_size=2),
        "containers": containers,
    },
)


def widget(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "spec": spec}


def owned_by(spec: dict[str, Any], updater: bool) -> Node:
    """What an applier of ``spec`` owns, or an updater that created it (granular nodes included)."""
    if updater:
        return compare_objects({}, widget(spec), ROOT)[0]
    return field_set_of(widget(spec), ROOT)


@settings(max_examples=400, deadline=None)
@given(
    base=specs,
    last=specs,
    last_by_updater=st.booleans(),
    changed=specs,
    new=specs,
    others=st.lists(st.tuples(specs, st.booleans()), max_size=2),
)
def test_one_pass_prune_matches_smd_set_algebra(
    base: dict[str, Any],
    last: dict[str, Any],
    last_by_updater: bool,
    changed: dict[str, Any],
    new: dict[str, Any],
    others: list[tuple[dict[str, Any], bool]],
) -> None:
    # The applier's previous set is usually what it applied, but may hold update-made ownership
    # (kubectl's client-side-apply migration merges the Update entry into the Apply one).
    live = merge_objects(merge_objects(widget(base), widget(last), ROOT), widget(changed), ROOT)
    merged = merge_objects(live, widget(new), ROOT)
    last_set = owned_by(last, last_by_updater)
    if last_by_updater:
        last_set = c_union(last_set, field_set_of(widget(changed), ROOT))
    current = field_set_of(widget(new), ROOT)
    owners = [current, *(owned_by(spec, updater) for spec, updater in others)]
    assert prune_disowned(merged, ROOT, last_set, owners, current) == literal_prune(
        merged, last_set, owners
    )
