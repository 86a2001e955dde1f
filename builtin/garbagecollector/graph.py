"""The garbage collector's owner → dependents graph (kube's pkg/controller/garbagecollector graph.go and the
part of graph_builder.go that keeps it): one node per observed object, keyed by uid, with the owner
references the object carries and the dependents that name it. The graph is kept from watch events only; the
collector decides what to delete from it, checking with live reads where the graph can lag."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apiserver.registry.deletion import FOREGROUND_FINALIZER, ORPHAN_FINALIZER

if TYPE_CHECKING:
    from apiserver.registry.store import Store

ABSENT_CAPACITY = 10_000  # kube's absentOwnerCache holds 500; deleted owners come in bulk here
_NONE: frozenset[str] = frozenset()


@dataclass(slots=True)
class Node:
    """An observed object: where it lives, what owns it, what it owns, and how it is being deleted."""

    uid: str
    store: Store
    namespace: str
    name: str
    api_version: str
    owners: list[dict[str, Any]] = field(default_factory=list)
    dependents: set[str] = field(default_factory=set)
    being_deleted: bool = False
    deleting_dependents: bool = False  # deletionTimestamp and the foregroundDeletion finalizer
    orphaning: bool = False  # deletionTimestamp and the orphan finalizer

    @property
    def kind(self) -> str:
        return self.store.resource.kind

    @property
    def group(self) -> str:
        return self.store.resource.group

    def reference_to(self, owner_uid: str) -> dict[str, Any] | None:
        return next((ref for ref in self.owners if ref.get("uid") == owner_uid), None)

    def blocks(self, owner_uid: str) -> bool:
        """Whether this dependent holds back its owner's foreground deletion (blockOwnerDeletion)."""
        ref = self.reference_to(owner_uid)
        return ref is not None and ref.get("blockOwnerDeletion") is True


def owner_references(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The well-formed owner references of an object (validation has refused any other on write)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return [ref for ref in refs if isinstance(ref, dict) and ref.get("uid")]


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


class Graph:
    """Nodes by uid; dependents of owners not observed yet (their watch may lag behind the dependent's, or
    they are gone); and the uids known to be gone (kube's absentOwnerCache: a uid is never reused, so an
    observed deletion answers every later question about it without a read)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.unobserved: dict[str, set[str]] = {}
        self.absent: OrderedDict[str, None] = OrderedDict()

    def observe(self, store: Store, obj: dict[str, Any]) -> tuple[Node, AbstractSet[str]]:
        """Add or update the node of ``obj``; returns it and the uids of owners it no longer names."""
        metadata = obj["metadata"]
        uid = str(metadata["uid"])
        node = self.nodes.get(uid)
        if node is None:
            node = self.nodes[uid] = Node(
                uid, store, str(metadata.get("namespace") or ""), str(metadata["name"]), ""
            )
            waiting = self.unobserved.pop(uid, None)
            if waiting is not None:
                node.dependents = waiting
        node.api_version = str(obj.get("apiVersion", ""))
        if metadata.get("deletionTimestamp"):
            finalizers = metadata.get("finalizers") or ()
            node.being_deleted = True
            node.deleting_dependents = FOREGROUND_FINALIZER in finalizers
            node.orphaning = ORPHAN_FINALIZER in finalizers
        else:
            node.being_deleted = node.deleting_dependents = node.orphaning = False
        if not metadata.get("ownerReferences") and not node.owners:
            return node, _NONE  # most objects: nothing to link or unlink
        owners = owner_references(obj)
        before = {ref["uid"] for ref in node.owners}
        node.owners = owners
        after = {ref["uid"] for ref in owners}
        for owner_uid in after - before:
            self._dependents_of(owner_uid).add(uid)
        for owner_uid in before - after:
            self._unlink(owner_uid, uid)
        return node, before - after

    def remove(self, uid: str) -> Node | None:
        """Drop the node of a deleted object and remember its uid as gone."""
        node = self.nodes.pop(uid, None)
        self.absent[uid] = None
        self.absent.move_to_end(uid)
        if len(self.absent) > ABSENT_CAPACITY:
            self.absent.popitem(last=False)
        if node is not None:
            for ref in node.owners:
                self._unlink(ref["uid"], uid)
        return node

    def _dependents_of(self, owner_uid: str) -> set[str]:
        owner = self.nodes.get(owner_uid)
        return (
            owner.dependents if owner is not None else self.unobserved.setdefault(owner_uid, set())
        )

    def _unlink(self, owner_uid: str, dependent_uid: str) -> None:
        owner = self.nodes.get(owner_uid)
        if owner is not None:
            owner.dependents.discard(dependent_uid)
            return
        waiting = self.unobserved.get(owner_uid)
        if waiting is not None:
            waiting.discard(dependent_uid)
            if not waiting:
                del self.unobserved[owner_uid]
