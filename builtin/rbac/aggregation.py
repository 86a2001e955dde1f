"""The ClusterRole aggregation controller (kube's pkg/controller/clusterroleaggregation): the rules of a
ClusterRole with an aggregationRule are the union of the rules of the ClusterRoles its selectors match
(itself excluded, by name order, each rule once), kept so as roles and their labels change. Aggregated
roles may be aggregated in turn (`view` into `edit` into `admin`): each change is another event."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from apiserver.machinery import errors
from apiserver.machinery.selectors import Requirement
from apiserver.storage.interface import StorageError
from builtin.rbac.index import GROUP
from builtin.rbac.informer import Informer
from builtin.rbac.rules import Rule, compile_rules
from builtin.wants import WantsStores

log = logging.getLogger(__name__)
_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def selector_requirements(selector: Any) -> tuple[Requirement, ...] | None:
    """A metav1.LabelSelector as requirements (kube's LabelSelectorAsSelector); None for one that cannot
    match (an unknown operator), () for the empty selector, which matches everything."""
    if not isinstance(selector, dict):
        return None
    requirements = [
        Requirement(str(key), "=", frozenset([str(value)]))
        for key, value in sorted((selector.get("matchLabels") or {}).items())
    ]
    for expression in selector.get("matchExpressions") or ():
        if not isinstance(expression, dict):
            return None
        operator = _OPERATORS.get(str(expression.get("operator")))
        if operator is None:
            return None
        values = frozenset(str(v) for v in expression.get("values") or ())
        requirements.append(Requirement(str(expression.get("key")), operator, values))
    return tuple(requirements)


def aggregated_rules(
    role: dict[str, Any], roles: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The rules ``role``'s aggregationRule gives it, from ``roles`` (every ClusterRole by name)."""
    selectors = [
        requirements
        for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ()
        if (requirements := selector_requirements(selector)) is not None
    ]
    own = role["metadata"]["name"]
    rules: list[Rule] = []
    for name in sorted(roles):
        if name == own:
            continue
        labels = roles[name]["metadata"].get("labels") or {}
        if any(all(r.matches(labels) for r in requirements) for requirements in selectors):
            rules.extend(r for r in compile_rules(roles[name].get("rules")) if r not in rules)
    return [rule.as_json() for rule in rules]


def _revision(obj: dict[str, Any] | None) -> int:
    text = ((obj or {}).get("metadata") or {}).get("resourceVersion") or "0"
    return int(text) if str(text).isdigit() else 0


class ClusterRoleAggregation:
    leader_only = True

    def __init__(self, context: WantsStores) -> None:
        self.store = context.store(GROUP, "clusterroles")
        self.roles: dict[str, dict[str, Any]] = {}
        self.informer = Informer(self.store, self)
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def replace(self, objects: list[dict[str, Any]]) -> None:
        self.roles = {obj["metadata"]["name"]: obj for obj in objects}
        self._dirty.set()

    def changed(self, event_type: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if event_type == "DELETED":
            self.roles.pop(name, None)
        elif _revision(obj) >= _revision(
            self.roles.get(name)
        ):  # not older than our own update's answer
            self.roles[name] = obj
        else:
            return
        self._dirty.set()

    async def start(self) -> None:
        """Aggregates what is stored (the bootstrap policy's admin, edit and view) before the server serves,
        to a fixed point: the first requests find them complete, and no write of ours runs beside them."""
        await self.informer.start()
        for _ in range(len(self.roles) + 1):
            if not await self.sync():
                break
        self._dirty.clear()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.informer.stop()

    async def _run(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self.sync()
            except (errors.APIError, StorageError) as error:
                log.warning("ClusterRole aggregation retries after: %s", error)
                await asyncio.sleep(1.0)
                self._dirty.set()

    async def sync(self) -> int:
        """Bring every aggregated role's rules up to date; returns how many changed. Each change is kept
        here at once (and is an event that runs this again), so roles aggregating aggregated roles settle
        in turn."""
        changed = 0
        for name, role in list(self.roles.items()):
            if not role.get("aggregationRule"):
                continue
            wanted = aggregated_rules(role, self.roles)
            if [r.as_json() for r in compile_rules(role.get("rules"))] == wanted and (
                role.get("rules") is not None or not wanted
            ):
                continue

            def set_rules(
                current: dict[str, Any], rules: list[dict[str, Any]] = wanted
            ) -> dict[str, Any]:
                current["rules"] = rules
                return current

            try:
                self.roles[name] = await self.store.update(None, name, set_rules)
            except errors.APIError as error:
                if error.code != 404:
                    raise
                continue
            changed += 1
        return changed
