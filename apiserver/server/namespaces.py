"""Namespaces: the defaults created at start (kube's bootstrap controller) and the check that a namespaced
object is only created in a namespace that exists."""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver.registry.store import Store
from apiserver.scheme import ResourceType
from apiserver.storage.interface import Storage

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def prepare_namespace(namespace: dict[str, Any]) -> None:
    """A new namespace is Active and carries the `kubernetes` finalizer (kube's namespace strategy)."""
    namespace["status"] = {"phase": "Active"}
    spec = namespace.setdefault("spec", {})
    finalizers = spec.setdefault("finalizers", [])
    if "kubernetes" not in finalizers:
        finalizers.append("kubernetes")


class NamespaceLifecycle:
    def __init__(self, resource: ResourceType, storage: Storage) -> None:
        self.store = Store(resource, storage, prepare_for_create=prepare_namespace)

    async def bootstrap(self) -> None:
        for name in DEFAULT_NAMESPACES:
            try:
                await self.store.create(
                    None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                )
            except errors.APIError as error:
                if error.reason != "AlreadyExists":
                    raise

    async def require_active(self, namespace: str) -> None:
        """Creation in a missing namespace is 404 `namespaces "x" not found`, as kube's admission answers."""
        await self.store.get(None, namespace)
