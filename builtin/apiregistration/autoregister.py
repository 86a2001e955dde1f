"""Local APIServices for every group-version this server serves, as kube-apiserver's autoregister and
crdregistration controllers make them (cmd/kube-apiserver/app/aggregator.go, kube-aggregator's
pkg/controllers/autoregister): ``v1.`` for the core group, ``VERSION.GROUP`` otherwise, with no service
(the aggregator marks them Available, reason Local), kube's ``apiVersionPriorities`` for the built-in groups
and 1000/100 (crdregistration's) for the others, and the label
``kube-aggregator.kubernetes.io/automanaged``: ``onstart`` for what the server serves from its start, ``true``
for a CustomResourceDefinition's versions, registered while served and removed when no longer served.

Only automanaged APIServices are changed: one a user made for the same group-version (to proxy it
elsewhere) is left as it is, as kube's autoregister leaves it. While serving, a ``true`` one is removed only
by the replica that registered it, so that a replica which has not yet installed a new CRD does not remove
its APIService.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from apiserver.machinery import errors
from apiserver.registry.store import ListOptions
from apiserver.storage.interface import StorageError
from builtin.wants import WantsServed, WantsStores

log = logging.getLogger(__name__)
GROUP = "apiregistration.k8s.io"
LABEL = "kube-aggregator.kubernetes.io/automanaged"
ON_START = "onstart"
SYNCED = "true"
DEFAULT_PRIORITY = (1000, 100)
"""crdregistration's GroupPriorityMinimum and VersionPriority, used for every group kube does not list."""
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    # kube's apiVersionPriorities (cmd/kube-apiserver/app/aggregator.go with controlplane's
    # DefaultGenericAPIServicePriorities): (groupPriorityMinimum, versionPriority)
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("apps", "v1"): (17800, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}


class AutoregisterServer(WantsStores, WantsServed, Protocol):
    """The Stores (the APIServices', every served resource's) and what is served, whose changes it
    follows."""


def api_service(group: str, version: str, sync: str) -> dict[str, Any]:
    """The local APIService of one group-version, as autoregister writes it."""
    minimum, priority = PRIORITIES.get((group, version), DEFAULT_PRIORITY)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}", "labels": {LABEL: sync}},
        "spec": {
            "group": group,
            "version": version,
            "groupPriorityMinimum": minimum,
            "versionPriority": priority,
        },
    }


class Autoregister:
    """Registers the served group-versions at start and again whenever the served resources change."""

    post_start_hook = "kube-apiserver-autoregistration"

    def __init__(self, context: AutoregisterServer) -> None:
        self.context = context
        self.store = context.store(GROUP, "apiservices")
        self.registered: set[str] = set()
        """The names of the ``true`` APIServices this replica wrote (the only ones it removes)."""
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def served(self) -> dict[str, dict[str, Any]]:
        """The wanted APIServices by name: ``true`` for a group-version all of whose resources were
        installed at run time (a CRD's), ``onstart`` otherwise."""
        run_time = self.context.served.installed if self.context.served is not None else set()
        syncs: dict[tuple[str, str], set[str]] = {}
        for resource in [store.resource for store in list(self.context.stores.values())]:
            if not resource.standalone:
                continue
            sync = SYNCED if (resource.group, resource.plural) in run_time else ON_START
            for version in resource.served_versions:
                syncs.setdefault((resource.group, version.name), set()).add(sync)
        wanted = {}
        for (group, name), kinds in syncs.items():
            sync = SYNCED if kinds == {SYNCED} else ON_START
            wanted[f"{name}.{group}"] = api_service(group, name, sync)
        return wanted

    async def start(self) -> None:
        await self.sync(at_start=True)
        if self.context.served is not None:
            self.context.served.listeners.append(self._dirty.set)
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self.context.served is not None:
            with contextlib.suppress(ValueError):
                self.context.served.listeners.remove(self._dirty.set)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self.sync(at_start=False)
            except (errors.APIError, StorageError) as error:
                log.warning("autoregistration of APIServices failed: %s", error)

    async def sync(self, at_start: bool) -> None:
        """Create the missing, correct the changed, and remove the unwanted automanaged APIServices: at
        start every one (the stored CRDs are served by then, so a ``true`` one unwanted now belongs to a CRD
        deleted while the server was down), later the ``true`` ones this replica registered."""
        wanted = self.served()
        page = await self.store.list(None, ListOptions())
        current = {obj["metadata"]["name"]: obj for obj in page.items}
        for name, obj in wanted.items():
            existing = current.get(name)
            if existing is None:
                await self._create(obj)
            elif LABEL in ((existing["metadata"].get("labels")) or {}):
                await self._update(existing, obj)
            if obj["metadata"]["labels"][LABEL] == SYNCED:
                self.registered.add(name)
        for name, existing in current.items():
            sync = (existing["metadata"].get("labels") or {}).get(LABEL)
            if name in wanted or sync is None:
                continue
            if at_start or (sync == SYNCED and name in self.registered):
                self.registered.discard(name)
                await self._delete(name)

    async def _create(self, obj: dict[str, Any]) -> None:
        try:
            await self.store.create(None, obj)
        except errors.APIError as error:
            if error.reason != "AlreadyExists":  # another replica was first
                raise

    async def _update(self, existing: dict[str, Any], wanted: dict[str, Any]) -> None:
        labels = existing["metadata"].get("labels") or {}
        spec = existing.get("spec") or {}
        if (
            labels.get(LABEL) == wanted["metadata"]["labels"][LABEL]
            and all(spec.get(key) == value for key, value in wanted["spec"].items())
            and spec.get("service") is None
        ):
            return

        def update(obj: dict[str, Any]) -> dict[str, Any]:
            obj["metadata"].setdefault("labels", {})[LABEL] = wanted["metadata"]["labels"][LABEL]
            obj["spec"] = dict(wanted["spec"])
            return obj

        with contextlib.suppress(errors.APIError):  # deleted or changed meanwhile: the next sync
            await self.store.update(None, existing["metadata"]["name"], update)

    async def _delete(self, name: str) -> None:
        try:
            await self.store.delete(None, name)
        except errors.APIError as error:
            if error.code != 404:
                raise
