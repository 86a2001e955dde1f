"""Namespaces: the defaults created at start (kube's bootstrap controller) and the check that a namespaced
object is only created in a namespace that exists."""

from __future__ import annotations

from apiserver import errors
from apiserver.registry.store import Store

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class NamespaceLifecycle:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def bootstrap(self) -> None:
        for name in DEFAULT_NAMESPACES:
            try:
                await self.store.create(None, {
                    "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
                })  # fmt: skip
            except errors.APIError as error:
                if error.reason != "AlreadyExists":
                    raise

    async def require_active(self, namespace: str) -> None:
        """Creation in a missing namespace is 404 `namespaces "x" not found`, as kube's admission answers."""
        await self.store.get(None, namespace)
