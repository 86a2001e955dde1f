"""The garbage collector (kube's pkg/controller/garbagecollector): informers on every resource's watch cache
keep the owner → dependents graph; workers delete dependents whose owners are gone (background), let a
foreground-deleted owner go once its blocking dependents are gone, and take an orphaned owner's references off
its dependents before it goes. Decisions are checked with live reads, and deletes carry the uid and
resourceVersion they were decided on, so a lagging graph never deletes the wrong object."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from apiserver.audit.internal import Target
from apiserver.authentication.user import UserInfo
from apiserver.machinery import errors
from apiserver.machinery.tasks import cancel_and_wait
from apiserver.registry.deletion import (
    BACKGROUND,
    FOREGROUND,
    FOREGROUND_FINALIZER,
    ORPHAN,
    ORPHAN_FINALIZER,
    Propagation,
)
from apiserver.registry.store import WATCH_BATCH, ListOptions, Store, WatchEvent
from apiserver.storage.interface import StorageError
from builtin.garbagecollector.events import EventReporter
from builtin.garbagecollector.graph import Graph, Node, group_of
from builtin.wants import WantsAudit, WantsElection, WantsStores

log = logging.getLogger(__name__)

WORKERS = 16  # kube-controller-manager's --concurrent-gc-syncs is 20
RETRY_SECONDS = 1.0
RESCAN_SECONDS = 2.0  # how soon a resource added while serving (a CRD) is watched
USER = UserInfo(
    "system:serviceaccount:kube-system:generic-garbage-collector",
    groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)
"""Who the GC's writes are by in the audit log: kube-controller-manager's GC with
--use-service-account-credentials (kubeadm's default) runs as this service account."""
SOLID, DANGLING, WAITING, UNRESOLVED, CLUSTER_DEPENDENT = range(5)


class CollectorServer(WantsStores, WantsElection, WantsAudit, Protocol):
    """What the collector uses of the server: every Store, the elector its writes check the lease with,
    and the audit its writes are logged through."""


class LeaseLapsed(Exception):
    """This replica's lease is not fresh: the write waits (another replica may lead by now)."""


class GarbageCollector:
    """A controller of the server (it names no kind: every persisted resource is watched)."""

    leader_only = True

    def __init__(self, context: CollectorServer) -> None:
        self.context = context
        self.graph = Graph()
        self.events = EventReporter(context)
        self._informers: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._synced: dict[tuple[str, str], asyncio.Event] = {}
        self._kinds: dict[tuple[str, str], Store] = {}
        self._queue: asyncio.Queue[tuple[Callable[[Node], Any], str]] = asyncio.Queue()
        self._queued: set[tuple[Callable[[Node], Any], str]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False

    async def start(self) -> None:
        """Builds the graph afresh: a replica that leads again starts from what is stored."""
        self.graph = Graph()
        self._synced.clear()
        self._running = False
        self._scan()
        self._tasks.append(asyncio.create_task(self._run()))

    async def stop(self) -> None:
        await cancel_and_wait(*self._tasks, *self._informers.values())
        self._tasks.clear()
        self._informers.clear()
        self._queue = asyncio.Queue()
        self._queued.clear()

    # -- informers ---------------------------------------------------------------------------------

    def _scan(self) -> None:
        """Watch every persisted resource not watched yet, and know every kind by (group, kind)."""
        for key, store in list(self.context.stores.items()):
            if not store.resource.persisted:
                continue
            self._kinds[(store.resource.group, store.resource.kind)] = store
            # a view of another resource's objects (events.k8s.io events are core events) is watched there
            if key not in self._informers and store.resource.stored_as is None:
                synced = self._synced[key] = asyncio.Event()
                self._informers[key] = asyncio.create_task(self._inform(store, synced))

    async def _run(self) -> None:
        """Once every informer has listed (kube waits for its caches to sync), look at every node, then
        work; and watch resources added later."""
        await asyncio.gather(*(event.wait() for event in self._synced.values()))
        self._running = True
        for node in list(self.graph.nodes.values()):
            self._look_at(node)
        self._tasks.extend(asyncio.create_task(self._work()) for _ in range(WORKERS))
        while True:
            await asyncio.sleep(RESCAN_SECONDS)
            self._scan()

    async def _inform(self, store: Store, synced: asyncio.Event) -> None:
        """List, then watch from the list's revision; start over when the watch ends (as an informer)."""
        while True:
            try:
                page = await store.list(None, ListOptions())
                seen = set()
                for obj in page.items:
                    seen.add(obj["metadata"]["uid"])
                    self._observed(store, obj)
                for node in [n for n in self.graph.nodes.values() if n.store is store]:
                    if node.uid not in seen:  # deleted while the watch was down
                        self._deleted(node.uid)
                synced.set()
                await self._follow(store, page.revision)
            except (errors.APIError, StorageError) as error:
                log.warning(
                    "the garbage collector lists %s again after: %s", store.resource.plural, error
                )
            await asyncio.sleep(RETRY_SECONDS)

    async def _follow(self, store: Store, revision: int) -> None:
        """Observe the store's changes after ``revision`` until its watch ends. A live write is handed
        over as its watch cache publishes it (``StoreWatch.listen``): one call, no task wake-up per
        write; what arrives otherwise (a replay, events queued meanwhile) is taken in batches."""
        changes = store.open_watch(None, revision, None, metadata_only=True)

        def take(events: list[WatchEvent]) -> bool:
            for event in events:
                if event.type == "DELETED":
                    self._deleted(event.object["metadata"]["uid"])
                else:
                    self._observed(store, event.object)
            return True

        changes.listen(take)
        try:
            while (batch := await changes.batch(WATCH_BATCH)) is not None:
                take(batch)
        finally:
            await changes.close()

    def _observed(self, store: Store, obj: dict[str, Any]) -> None:
        """kube's processGraphChanges for an added or updated object."""
        node, released = self.graph.observe(store, obj)
        for owner_uid in released:  # a dependent let go: its foreground-deleting owner may go now
            owner = self.graph.nodes.get(owner_uid)
            if owner is not None and owner.deleting_dependents:
                self._enqueue(self._attempt_to_delete, owner.uid)
        if self._running:
            self._look_at(node)

    def _look_at(self, node: Node) -> None:
        """Queue what the node's state asks for: orphaning, deleting dependents first, or a check of
        owners that are not plainly alive in the graph."""
        if node.orphaning:
            self._enqueue(self._orphan_dependents, node.uid)
        if node.deleting_dependents:
            self._enqueue(self._attempt_to_delete, node.uid)
            for dependent in node.dependents:
                self._enqueue(self._attempt_to_delete, dependent)
        for ref in node.owners:
            owner = self.graph.nodes.get(ref["uid"])
            if (
                owner is None
                or owner.deleting_dependents
                or (owner.store.resource.namespaced and owner.namespace != node.namespace)
            ):
                self._enqueue(self._attempt_to_delete, node.uid)
                break

    def _deleted(self, uid: str) -> None:
        node = self.graph.remove(uid)
        if node is None:
            return
        for ref in node.owners:
            owner = self.graph.nodes.get(ref["uid"])
            if owner is not None and owner.deleting_dependents:
                self._enqueue(self._attempt_to_delete, owner.uid)
        for dependent in node.dependents:
            self._enqueue(self._attempt_to_delete, dependent)

    # -- the work queue ----------------------------------------------------------------------------

    def _enqueue(self, action: Callable[[Node], Any], uid: str) -> None:
        item = (action, uid)
        if item not in self._queued:
            self._queued.add(item)
            self._queue.put_nowait(item)

    async def _work(self) -> None:
        while True:
            item = await self._queue.get()
            self._queued.discard(item)
            action, uid = item
            node = self.graph.nodes.get(uid)
            if node is None:
                continue
            try:
                await action(node)
            except (errors.APIError, StorageError, LeaseLapsed) as error:
                # a conflict, an unavailable store, a lease not renewed in time: try again later (kube's
                # rate-limited requeue); a replica that lost the lease stops its collector meanwhile
                log.info(
                    "garbage collector: %s %s/%s: %s", node.kind, node.namespace, node.name, error
                )
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self._enqueue, action, uid)

    # -- decisions ---------------------------------------------------------------------------------

    async def _attempt_to_delete(self, node: Node) -> None:
        """kube's attemptToDeleteItem."""
        if node.being_deleted and not node.deleting_dependents:
            return
        latest = await self._live(node)
        if latest is None:
            return
        if node.deleting_dependents:
            await self._process_deleting_dependents(node)
            return
        states: dict[str, int] = {}
        for ref in node.owners:
            states[ref["uid"]] = await self._owner_state(node, ref)
        if not states or UNRESOLVED in states.values() or CLUSTER_DEPENDENT in states.values():
            return  # kube keeps the item: it retries unknown kinds, forgets invalid references
        solid = [uid for uid, state in states.items() if state == SOLID]
        gone = {uid for uid, state in states.items() if state in (DANGLING, WAITING)}
        if solid:
            if gone:
                await self._update(node, lambda obj: _without_owners(obj, gone))
            return
        finalizers = latest["metadata"].get("finalizers") or []
        if WAITING in states.values() and node.dependents:
            if any(
                (d := self.graph.nodes.get(uid)) is not None and d.deleting_dependents
                for uid in node.dependents
            ):
                # a cycle: the owner waits for this item, which would wait for its dependents
                await self._update(node, _unblocked)
            policy = FOREGROUND
        elif ORPHAN_FINALIZER in finalizers:
            policy = ORPHAN
        elif FOREGROUND_FINALIZER in finalizers:
            policy = FOREGROUND
        else:
            policy = BACKGROUND
        await self._delete(node, latest, policy)

    async def _process_deleting_dependents(self, node: Node) -> None:
        """kube's processDeletingDependentsItem: the foregroundDeletion finalizer goes once no dependent
        blocks its owner's deletion; until then the blocking ones are (re)considered."""
        blocking = [
            dep
            for uid in node.dependents
            if (dep := self.graph.nodes.get(uid)) is not None and dep.blocks(node.uid)
        ]
        if not blocking:
            await self._update(node, lambda obj: _without_finalizer(obj, FOREGROUND_FINALIZER))
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self._enqueue(self._attempt_to_delete, dep.uid)

    async def _orphan_dependents(self, node: Node) -> None:
        """kube's attemptToOrphanWorker: every dependent loses its references to the owner, then the owner
        loses the orphan finalizer."""
        for uid in list(node.dependents):
            dep = self.graph.nodes.get(uid)
            if dep is not None:
                await self._update(dep, lambda obj: _without_owners(obj, {node.uid}))
        await self._update(node, lambda obj: _without_finalizer(obj, ORPHAN_FINALIZER))

    async def _owner_state(self, node: Node, ref: dict[str, Any]) -> int:
        """kube's isDangling and classifyReferences for one owner reference."""
        store = self._kind_store(group_of(str(ref.get("apiVersion", ""))), str(ref.get("kind", "")))
        if store is None:
            return UNRESOLVED
        namespaced = store.resource.namespaced
        if namespaced and not node.namespace:
            await self.events.invalid_namespace(node, ref)
            return CLUSTER_DEPENDENT
        uid = ref["uid"]
        if uid in self.graph.absent:
            return DANGLING
        owner = self.graph.nodes.get(uid)
        if owner is not None and namespaced and owner.namespace != node.namespace:
            # the uid lives in another namespace: the owner is absent from the dependent's
            await self.events.invalid_namespace(node, ref)
        try:
            found = await store.get(node.namespace if namespaced else None, str(ref.get("name")))
        except errors.APIError as error:
            if error.code == 404:
                return DANGLING
            raise
        metadata = found["metadata"]
        if metadata.get("uid") != uid:
            return DANGLING
        waiting = metadata.get("deletionTimestamp") and FOREGROUND_FINALIZER in (
            metadata.get("finalizers") or []
        )
        return WAITING if waiting else SOLID

    def _kind_store(self, group: str, kind: str) -> Store | None:
        store = self._kinds.get((group, kind))
        if store is None:
            self._scan()  # a kind added while serving
            store = self._kinds.get((group, kind))
        return store

    # -- writes ------------------------------------------------------------------------------------

    async def _live(self, node: Node) -> dict[str, Any] | None:
        try:
            obj = await node.store.get(node.namespace or None, node.name)
        except errors.APIError as error:
            if error.code == 404:
                return None
            raise
        return obj if obj["metadata"].get("uid") == node.uid else None

    def _check_lease(self) -> None:
        """Before each write: a replica paused past its lease (its campaign not yet run to step down) must
        not write on a lease another replica may have taken."""
        elector = self.context.elector
        if elector is not None and not elector.holds():
            raise LeaseLapsed("the lease was not renewed within the renew deadline")

    async def _delete(self, node: Node, latest: dict[str, Any], policy: str) -> None:
        """kube's deleteObject: preconditions on the uid and resourceVersion the decision was made on, so
        that an object changed or re-created under the same name since is never deleted."""
        version = str(latest["metadata"]["resourceVersion"])
        options = {
            "kind": "DeleteOptions",
            "apiVersion": "meta.k8s.io/v1",
            "preconditions": {"uid": node.uid, "resourceVersion": version},
            "propagationPolicy": policy,
        }
        self._check_lease()
        write = node.store.delete(
            node.namespace or None,
            node.name,
            uid_precondition=node.uid,
            version_precondition=version,
            propagation=Propagation(policy),
        )
        try:
            await self.context.audit.write(USER, "delete", _target(node), write, options)
        except errors.APIError as error:
            if error.code != 404:
                raise

    async def _update(self, node: Node, change: Callable[[dict[str, Any]], None]) -> None:
        """kube's patches of the GC (owner references, finalizers, blockOwnerDeletion), which carry the
        item's uid: an object re-created under the same name is a 409, never changed."""
        resource = node.store.resource

        def try_update(obj: dict[str, Any]) -> dict[str, Any]:
            uid = obj["metadata"].get("uid")
            if uid != node.uid:
                raise errors.conflict(
                    resource.plural,
                    resource.group,
                    node.name,
                    f"Precondition failed: UID in precondition: {node.uid}, UID in object meta: {uid}",
                )
            change(obj)
            return obj

        self._check_lease()
        write = node.store.update(node.namespace or None, node.name, try_update)
        try:
            await self.context.audit.write(USER, "patch", _target(node), write)
        except errors.APIError as error:
            if error.code != 404:
                raise


def _target(node: Node) -> Target:
    """Where kube's GC would send its request: the version the item was observed in."""
    resource = node.store.resource
    version = node.api_version.rpartition("/")[2] or resource.storage_version.name
    return Target(resource.group, version, resource.plural, node.namespace, node.name)


def _without_owners(obj: dict[str, Any], uids: set[str]) -> None:
    metadata = obj["metadata"]
    kept = [ref for ref in metadata.get("ownerReferences") or [] if ref.get("uid") not in uids]
    if kept:
        metadata["ownerReferences"] = kept
    else:
        metadata.pop("ownerReferences", None)


def _without_finalizer(obj: dict[str, Any], finalizer: str) -> None:
    metadata = obj["metadata"]
    kept = [f for f in metadata.get("finalizers") or [] if f != finalizer]
    if kept:
        metadata["finalizers"] = kept
    else:
        metadata.pop("finalizers", None)


def _unblocked(obj: dict[str, Any]) -> None:
    """kube's unblockOwnerReferences: every blockOwnerDeletion of the item becomes false."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("blockOwnerDeletion"):
            ref["blockOwnerDeletion"] = False
