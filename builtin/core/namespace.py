"""core/v1 Namespace (kube's pkg/registry/core/namespace, the NamespaceLifecycle admission plugin and the
namespace controller): a new namespace is Active and carries the `kubernetes` finalizer; content is created
only in an existing, active namespace; the default namespaces exist from the start and the immortal ones cannot
be deleted; a deleted namespace is Terminating until the controller has emptied it, then it goes."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from apiserver.admission.interface import Attributes, Operation
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType
from apiserver.registry.keys import object_key
from apiserver.registry.store import ListOptions, Store
from apiserver.registry.strategy import Strategy
from apiserver.schema.objectmeta import name_is_dns_label
from apiserver.storage.interface import KeyValue, StorageError
from builtin.deletion import delete_all
from builtin.wants import WantsStores

log = logging.getLogger(__name__)

GROUP, PLURAL = "", "namespaces"
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# kube's NamespaceLifecycle admission refuses to delete these: the server and its clients rely on them
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
FINALIZER = "kubernetes"
NAME_LABEL = (
    "kubernetes.io/metadata.name"  # k8s.io/api core/v1 well_known_labels.go LabelMetadataName
)
RETRY_SECONDS = 1.0
_TERMINATING_CAPACITY = 4096
"""Namespaces whose cached value NamespaceLifecycle remembers having looked at."""


class NamespaceStrategy(Strategy):
    """A new namespace is Active with the `kubernetes` finalizer in its spec; deleting it makes it Terminating
    until the namespace controller has emptied it and cleared that finalizer. A finished DELETE answers the
    object, as kube's namespace storage does."""

    delete_returns_object = True
    update_subresources = ("finalize",)
    """namespaces/finalize takes the body's ``spec.finalizers`` (kube's namespaceFinalizeStrategy; the status
    stays the stored one, as on every update of a kind with a status subresource)."""

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """``spec.finalizers`` change only through namespaces/finalize (kube's namespaceStrategy
        PrepareForUpdate keeps the stored ones)."""
        _keep_finalizers(obj, old)

    def default(self, obj: Object) -> None:
        """SetDefaults_Namespace: the name label, on a body that has its name (not a generateName), so that
        the writer owns it; ``canonicalize`` sets it on every namespace once the name is final."""
        metadata = obj["metadata"]
        name, labels = metadata.get("name"), metadata.get("labels")
        if name and isinstance(name, str) and isinstance(labels, dict | None):
            metadata["labels"] = {**(labels or {}), NAME_LABEL: name}

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = spec.setdefault("finalizers", [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")

    @staticmethod
    def name_rule(name: str, prefix: bool) -> list[str]:
        """A namespace's name is a DNS label, not a subdomain (kube's ValidateNamespaceName): a name with a
        dot or over 63 characters could not be used in the names of what lives in it. Checked with the rest
        of the metadata, so its causes come before the labels' (the name label holds the name)."""
        return name_is_dns_label(name, prefix)

    def canonicalize(self, obj: Object) -> None:
        """The ``kubernetes.io/metadata.name`` label always equals the name (kube's namespace strategy
        Canonicalize), so that a namespace selector can pick namespaces by name; here, once a generated name
        is final, and on every update, whatever the client sent."""
        metadata = obj["metadata"]
        labels = metadata.get("labels") or {}
        labels[NAME_LABEL] = metadata["name"]
        metadata["labels"] = labels

    def finalized_later(self, obj: Object) -> bool:
        return bool((obj.get("spec") or {}).get("finalizers"))

    def prepare_for_deletion(self, obj: Object) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"


def _keep_finalizers(obj: Object, old: Object) -> None:
    finalizers = (old.get("spec") or {}).get("finalizers")
    spec = obj.setdefault("spec", {})
    if finalizers is None:
        spec.pop("finalizers", None)
    else:
        spec["finalizers"] = finalizers


class NamespaceLifecycle:
    """kube's NamespaceLifecycle admission plugin: 404 for content in a missing namespace, 403 for content in
    a terminating one, 403 for deleting an immortal namespace.

    Like kube's, it looks in the namespaces' watch cache first (no storage round trip per create) and reads
    storage only when the cache does not have the namespace; whether a cached namespace is terminating is
    remembered per cached value, so that the next create in it only compares that value's identity.
    """

    def __init__(self, context: WantsStores) -> None:
        self.context = context
        self._terminating: dict[str, tuple[str, KeyValue, bool]] = {}
        """By namespace: its key, the cached value last looked at, and whether it is being deleted."""

    def handles(self, operation: Operation) -> bool:
        return operation in (Operation.CREATE, Operation.DELETE)

    def acts_on(self, resource: ResourceType, operation: Operation) -> bool:
        """Creates of namespaced content, deletes of namespaces."""
        if operation is Operation.CREATE:
            return resource.namespaced
        return operation is Operation.DELETE and (resource.group, resource.plural) == (
            GROUP,
            PLURAL,
        )

    async def validate(self, attributes: Attributes) -> None:
        resource = attributes.resource
        if attributes.operation is Operation.DELETE:
            if (resource.group, resource.plural) == (GROUP, PLURAL) and (
                attributes.name in IMMORTAL_NAMESPACES
            ):
                raise errors.APIError(
                    403,
                    "Forbidden",
                    f'namespaces "{attributes.name}" is forbidden: this namespace may not be deleted',
                    name=attributes.name,
                    kind=PLURAL,
                )
            return
        if not resource.namespaced or not attributes.namespace:
            return
        terminating = self._remembered(attributes.namespace)
        if terminating is None:
            terminating = await self._is_terminating(attributes.namespace)
        if terminating:
            raise errors.APIError(
                403,
                "Forbidden",
                f'{resource.group_resource} "{attributes.name}" is forbidden: unable to create new content '
                f"in namespace {attributes.namespace} because it is being terminated",
                name=attributes.name,
                group=resource.group,
                kind=resource.plural,
            )

    def _remembered(self, namespace: str) -> bool | None:
        """Whether ``namespace`` is being deleted, when its cached value is the one last looked at."""
        seen = self._terminating.get(namespace)
        if seen is None:
            return None
        cache = self.context.store(GROUP, PLURAL).cache
        if cache is None or cache.objects.get(seen[0]) is not seen[1]:
            return None
        return seen[2]

    async def _is_terminating(self, namespace: str) -> bool:
        """Whether ``namespace`` is being deleted; 404 when it does not exist."""
        namespaces = self.context.store(GROUP, PLURAL)
        cache = namespaces.cache
        if cache is None:
            return _terminating(await namespaces.get(None, namespace))
        key = object_key(namespaces.resource, None, namespace)
        cached = cache.objects.get(key)
        if cached is None:
            return _terminating(await namespaces.get(None, namespace))
        terminating = _terminating((await cache.rendered(cached, namespaces.decode))[0])
        if len(self._terminating) >= _TERMINATING_CAPACITY:
            self._terminating.clear()
        self._terminating[namespace] = (key, cached, terminating)
        return terminating


def _terminating(namespace: Object) -> bool:
    return bool(namespace["metadata"].get("deletionTimestamp"))


class DefaultNamespaces:
    """Creates the default namespaces at start, on every replica (kube's bootstrap controller runs in
    every kube-apiserver): the leader's controllers and its Lease live in them."""

    post_start_hook = "bootstrap-controller"
    """kube's hook that creates the default namespaces: its health check passes once they exist."""

    def __init__(self, context: WantsStores) -> None:
        self.context = context

    async def start(self) -> None:
        store = self.context.store(GROUP, PLURAL)
        for name in DEFAULT_NAMESPACES:
            try:
                await store.create(
                    None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                )
            except errors.APIError as error:
                if error.reason != "AlreadyExists":
                    raise

    async def stop(self) -> None:
        """Nothing runs after start."""


class NamespaceController:
    """Finalizes every namespace that is (or becomes) marked for deletion: deletes its content, then clears
    the `kubernetes` finalizer (kube's namespace controller, on the elected replica)."""

    leader_only = True

    def __init__(self, context: WantsStores) -> None:
        self.context = context
        self._controller: asyncio.Task[None] | None = None
        self._finalizing: dict[str, asyncio.Task[None]] = {}

    @property
    def store(self) -> Store:
        return self.context.store(GROUP, PLURAL)

    @property
    def contents(self) -> list[Store]:
        return [
            store
            for store in self.context.stores.values()
            if store.resource.namespaced and store.resource.persisted  # not TokenRequest's
        ]

    async def start(self) -> None:
        self._controller = asyncio.create_task(self._run())

    async def stop(self) -> None:
        tasks = [t for t in (self._controller, *self._finalizing.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        """List, then watch from the list's revision, and start over whenever the watch ends (as an
        informer does): the watch cache ends its watchers when it restarts, and a storage watch can fail."""
        while True:
            try:
                page = await self.store.list(None, ListOptions())
                for namespace in page.items:
                    self._consider(namespace)
                async for event in self.store.watch(None, page.revision, None):
                    if event.type != "DELETED":
                        self._consider(event.object)
            except (errors.APIError, StorageError) as error:
                log.warning("the namespace controller lists again after: %s", error)
            await asyncio.sleep(RETRY_SECONDS)

    def _consider(self, namespace: dict[str, object]) -> None:
        metadata = namespace["metadata"]
        assert isinstance(metadata, dict)
        name = str(metadata["name"])
        if metadata.get("deletionTimestamp") and name not in self._finalizing:
            self._finalizing[name] = asyncio.create_task(self._finalize(name))

    async def _finalize(self, namespace: str) -> None:
        try:
            while await self._delete_contents(namespace):
                await asyncio.sleep(
                    RETRY_SECONDS
                )  # objects with finalizers are waiting for their owners

            def clear_finalizer(current: dict[str, object]) -> dict[str, object]:
                spec = current.setdefault("spec", {})
                assert isinstance(spec, dict)
                spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != FINALIZER]
                return current

            await self.store.update(None, namespace, clear_finalizer, subresource="finalize")
        except errors.APIError as error:
            if error.code != 404:
                log.warning("finalizing namespace %s: %s", namespace, error)
        finally:
            self._finalizing.pop(namespace, None)

    async def _delete_contents(self, namespace: str) -> int:
        """Delete everything in the namespace; returns how many objects are still there."""
        return sum([await delete_all(store, namespace) for store in self.contents])
