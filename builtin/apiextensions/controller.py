"""The CustomResourceDefinition controller: kube's naming, establishing and finalizing controllers and the
apiextensions server's handler installation in one loop, run by every replica.

Each replica watches the CRDs and serves what they define from its own Scheme (so replicas on one etcd agree
within a watch event); each also writes the status it computes (NamesAccepted, Established, Terminating,
acceptedNames, storedVersions) when the stored one differs, so whichever replica is first writes it and the
others find nothing to change. A CRD marked for deletion has its custom resources deleted, then its cleanup
finalizer removed; it stops being served when it is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.scheme import ResourceType
from apiserver.registry.meta import now_rfc3339
from apiserver.registry.store import ListOptions, Store
from apiserver.server.served import ServedResources
from apiserver.storage.interface import StorageError
from builtin.apiextensions.conversion import WebhookConverter
from builtin.apiextensions.judge import judge, remembered
from builtin.apiextensions.naming import accepted_names, requested_names
from builtin.apiextensions.openapi import group_documents
from builtin.apiextensions.resource import resource_type
from builtin.apiextensions.strategy import FINALIZER
from builtin.deletion import delete_all
from builtin.wants import WantsServed, WantsStores
from builtin.webhook.client import WebhookClients

if TYPE_CHECKING:
    from generator.definition import Definition

__all__ = ["CustomResourceDefinitionController"]

log = logging.getLogger(__name__)

GROUP, PLURAL = "apiextensions.k8s.io", "customresourcedefinitions"
RETRY_SECONDS = 1.0


class CRDServer(WantsStores, WantsServed, Protocol):
    """What the controller uses of the server: the Stores (the CRDs', the Services its webhooks resolve
    through, the custom resources') and what is served, which it installs in."""


@dataclass(frozen=True)
class _Served:
    """What one CRD has installed: its resource and the definition its OpenAPI comes from."""

    generation: int
    resource: ResourceType
    definition: Definition


def _condition(type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


def _merge_conditions(
    current: list[dict[str, Any]], desired: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The desired conditions, keeping a condition's lastTransitionTime while its status is unchanged."""
    before = {c.get("type"): c for c in current}
    merged = []
    for condition in desired:
        old = before.get(condition["type"])
        same = old is not None and old.get("status") == condition["status"]
        stamp = old.get("lastTransitionTime") if same and old else now_rfc3339()
        merged.append({**condition, "lastTransitionTime": stamp})
    return merged


def _revision(crd: Object) -> int:
    try:
        return int(crd["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _comparable(conditions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in conditions]


class CustomResourceDefinitionController:
    """Serves every established CRD and keeps the CRDs' status; see the module docstring."""

    def __init__(self, context: CRDServer) -> None:
        self.context = context
        self._crds: dict[str, Object] = {}
        self._served: dict[str, _Served] = {}
        self._judged: dict[tuple[str, int], Definition | None] = {}
        self._finalizing: dict[str, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._reconciler: asyncio.Task[None] | None = None
        self._changes = asyncio.Event()
        self._publisher: asyncio.Task[None] | None = None
        self._stale_openapi: set[str] = set()
        self._openapi_changes = asyncio.Event()
        self._lock = asyncio.Lock()
        self._webhooks = WebhookClients(context)

    @property
    def store(self) -> Store:
        return self.context.store(GROUP, PLURAL)

    @property
    def served(self) -> ServedResources:
        assert self.context.served is not None, "the server sets its served resources"
        return self.context.served

    async def start(self) -> None:
        """Serve the stored CRDs before the server does (they survive restarts), then follow changes."""
        page = await self.store.list(None, ListOptions())
        self._crds = {crd["metadata"]["name"]: crd for crd in page.items}
        await self._reconcile()
        await self._publish_openapi()
        self._task = asyncio.create_task(self._run(page.revision))
        self._reconciler = asyncio.create_task(self._reconcile_when_changed())
        self._publisher = asyncio.create_task(self._publish_openapi_when_changed())

    async def stop(self) -> None:
        tasks = [
            t
            for t in (self._task, self._reconciler, self._publisher, *self._finalizing.values())
            if t is not None
        ]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._webhooks.close()

    def _remember(self, crd: Object) -> None:
        """Keep the newest copy of a CRD: the watch may deliver an older one than this replica's own last
        status write, which would otherwise look like a status to write again."""
        name = crd["metadata"]["name"]
        known = self._crds.get(name)
        if known is None or _revision(crd) >= _revision(known):
            self._crds[name] = crd

    async def _run(self, revision: int) -> None:
        """Watch from ``revision``; list and watch again whenever the watch ends (as an informer does).
        Events only record the CRDs; the reconciler catches up with all that arrived meanwhile in one
        round, so a bulk install is not one full round per event (and per status write)."""
        while True:
            try:
                async for event in self.store.watch(None, revision, None):
                    if event.type == "DELETED":
                        self._crds.pop(event.object["metadata"]["name"], None)
                    else:
                        self._remember(event.object)
                    self._changes.set()
            except (errors.APIError, StorageError) as error:
                log.warning("the CRD controller lists again after: %s", error)
            await asyncio.sleep(RETRY_SECONDS)
            try:
                page = await self.store.list(None, ListOptions())
            except (errors.APIError, StorageError) as error:
                log.warning("the CRD controller could not list: %s", error)
                continue
            self._crds = {crd["metadata"]["name"]: crd for crd in page.items}
            revision = page.revision
            self._changes.set()

    async def _reconcile_when_changed(self) -> None:
        while True:
            await self._changes.wait()
            self._changes.clear()
            try:
                await self._reconcile()
            except (errors.APIError, StorageError) as error:
                log.warning("the CRD controller will reconcile again after: %s", error)
                await asyncio.sleep(RETRY_SECONDS)
                self._changes.set()

    async def _definition(self, crd: Object) -> Definition | None:
        """The CRD's checked Definition, judged once per generation (in a thread: a large CRD's schema
        takes a few hundred milliseconds, which requests need not wait for)."""
        metadata = crd["metadata"]
        key = (str(metadata.get("uid", "")), int(metadata.get("generation", 1)))
        if key not in self._judged:
            # usually the judgement the create was admitted with; otherwise judged in a thread
            found = remembered(crd)
            if found is None:
                found = await asyncio.to_thread(judge, crd)
            self._judged[key] = found[0]
        return self._judged[key]

    async def _reconcile(self) -> None:
        """Bring serving and every CRD's status in line with the CRDs this replica knows."""
        async with self._lock:
            with self.served.batch():  # one discovery rebuild for the round
                changed_groups: set[str] = set()
                accepted: dict[str, dict[str, Any]] = {}
                ordered = sorted(
                    self._crds.values(),
                    key=lambda c: (
                        c["metadata"].get("creationTimestamp", ""),
                        c["metadata"]["name"],
                    ),
                )
                for crd in (
                    ordered
                ):  # accepted names of others, as stored or as decided earlier this round
                    status = crd.get("status") or {}
                    if status.get("acceptedNames"):
                        accepted[crd["metadata"]["name"]] = status["acceptedNames"]
                statuses: dict[str, dict[str, Any]] = {}
                for crd in ordered:
                    changed_groups |= await self._reconcile_one(crd, accepted, statuses)
                for name in [n for n in self._served if n not in self._crds]:
                    gone = self._served.pop(name)
                    await self.served.uninstall(gone.resource.group, gone.resource.plural)
                    changed_groups.add(gone.resource.group)
            # Established is written once routing and discovery show the kind; the OpenAPI documents
            # follow (kube's openapi controller also publishes after the fact), built apart from the
            # rounds: they are the largest cost of a round, and CRDs created meanwhile should not wait
            for name, desired in statuses.items():
                await self._write_status(name, desired)
            if changed_groups:
                self._stale_openapi |= changed_groups
                self._openapi_changes.set()

    async def _publish_openapi(self) -> None:
        """Rebuild the OpenAPI documents of every group whose CRDs changed since the last call."""
        with self.served.batch():
            while self._stale_openapi:
                group = self._stale_openapi.pop()
                definitions = [
                    s.definition for s in self._served.values() if s.resource.group == group
                ]
                v3, v2 = await asyncio.to_thread(group_documents, definitions)
                self.served.publish_openapi(f"customresourcedefinitions:{group}", v3, v2)

    async def _publish_openapi_when_changed(self) -> None:
        while True:
            await self._openapi_changes.wait()
            self._openapi_changes.clear()
            await self._publish_openapi()

    async def _reconcile_one(
        self,
        crd: Object,
        accepted: dict[str, dict[str, Any]],
        statuses: dict[str, dict[str, Any]],
    ) -> set[str]:
        """Serve one CRD as it now is; the groups whose served resources changed. The status to write, when
        it differs from the stored one, goes to ``statuses``."""
        name = crd["metadata"]["name"]
        spec = crd.get("spec") or {}
        group = str(spec.get("group", ""))
        others = [
            names
            for other, names in accepted.items()
            if other != name and (self._crds.get(other, {}).get("spec") or {}).get("group") == group
        ]
        others += self._built_in_names(group)
        status = crd.get("status") or {}
        requested = requested_names(crd)
        names, names_condition = accepted_names(
            requested, status.get("acceptedNames") or {}, others
        )
        accepted[name] = names
        definition = await self._definition(crd)
        conditions = [_condition("NamesAccepted", **names_condition)]
        changed: set[str] = set()
        if names_condition["status"] == "True" and definition is not None:
            conditions.append(
                _condition(
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                )
            )
            changed |= await self._serve(name, crd, definition)
        else:
            conditions.append(
                _condition("Established", "False", "NotAccepted", "not all names are accepted")
            )
        terminating = bool(crd["metadata"].get("deletionTimestamp"))
        if terminating:
            conditions.append(
                _condition(
                    "Terminating",
                    "True",
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                )
            )
            self._refuse_creates(name)
            if name not in self._finalizing:
                self._finalizing[name] = asyncio.create_task(self._finalize(name))
        stored_versions = list(status.get("storedVersions") or [])
        storage = next(
            (v.get("name") for v in spec.get("versions") or [] if v.get("storage")), None
        )
        if definition is not None and storage and storage not in stored_versions:
            stored_versions.append(storage)
        desired = {
            "conditions": conditions,
            "acceptedNames": names,
            "storedVersions": stored_versions,
        }
        if (
            _comparable(status.get("conditions") or []) != conditions
            or status.get("acceptedNames") != names
            or status.get("storedVersions", []) != stored_versions
        ):
            statuses[name] = desired
        return changed

    def _refuse_creates(self, name: str) -> None:
        """A terminating CRD's kind takes no new objects while its objects are deleted (kube's 405)."""
        served = self._served.get(name)
        if served is not None:
            store = self.context.stores.get((served.resource.group, served.resource.plural))
            if store is not None:
                store.terminating = True

    def _built_in_names(self, group: str) -> list[dict[str, Any]]:
        """The names of the group's resources that no CRD serves (generated kinds): never a CRD's."""
        return [
            {
                "plural": r.plural,
                "singular": r.singular,
                "shortNames": list(r.short_names),
                "kind": r.kind,
                "listKind": r.list_kind,
            }
            for r in self.served.scheme
            if r.group == group and (r.group, r.plural) not in self.served.installed
        ]

    async def _serve(self, name: str, crd: Object, definition: Definition) -> set[str]:
        """Install (or re-install, after a spec change) what the CRD defines; the groups that changed."""
        generation = int(crd["metadata"].get("generation", 1))
        served = self._served.get(name)
        if served is not None and served.generation == generation:
            return set()
        resource = resource_type(definition)  # a millisecond or two: no thread needed
        if definition.conversion_webhook is not None:
            converter = WebhookConverter(
                self._webhooks, resource.group, resource.kind, definition.conversion_webhook
            )
            resource = dataclasses.replace(resource, converter=converter)
        if served is not None and (served.resource.group, served.resource.plural) != (
            resource.group,
            resource.plural,
        ):
            await self.served.uninstall(served.resource.group, served.resource.plural)
        await self.served.install(resource)
        self._served[name] = _Served(generation, resource, definition)
        return {resource.group} | ({served.resource.group} if served is not None else set())

    async def _write_status(self, name: str, desired: dict[str, Any]) -> None:
        def update(current: Object) -> Object:
            status = dict(current.get("status") or {})
            status["conditions"] = _merge_conditions(
                status.get("conditions") or [], desired["conditions"]
            )
            status["acceptedNames"] = desired["acceptedNames"]
            status["storedVersions"] = desired["storedVersions"]
            current["status"] = status
            return current

        try:
            written = await self.store.update(None, name, update, subresource="status")
            if name in self._crds:
                self._remember(written)
        except errors.APIError as error:
            if error.code not in (404, 409):
                log.warning("writing the status of CRD %s: %s", name, error)

    async def _finalize(self, name: str) -> None:
        """Delete every custom resource of the CRD, then remove its cleanup finalizer."""
        try:
            served = self._served.get(name)
            if served is not None:
                store = self.context.stores.get((served.resource.group, served.resource.plural))
                while store is not None and await delete_all(store, None):
                    await asyncio.sleep(RETRY_SECONDS)  # objects with finalizers of their own

            def clear_finalizer(current: Object) -> Object:
                metadata = current["metadata"]
                metadata["finalizers"] = [
                    f for f in metadata.get("finalizers") or [] if f != FINALIZER
                ]
                return current

            await self.store.update(None, name, clear_finalizer)
        except errors.APIError as error:
            if error.code != 404:
                log.warning("finalizing CRD %s: %s", name, error)
        finally:
            self._finalizing.pop(name, None)
