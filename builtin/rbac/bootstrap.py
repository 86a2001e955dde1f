"""The RBAC bootstrap post-start hook (kube's pkg/registry/rbac/rest storage_rbac.go EnsureRBACPolicy and
pkg/registry/rbac/reconciliation): at every start the default roles and bindings are created when missing
and, unless a user set `rbac.authorization.kubernetes.io/autoupdate: "false"` on one, given back what they
lack (labels, annotations, rules, aggregation selectors, subjects); what users added is kept."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from apiserver.machinery import errors
from apiserver.registry.store import Store
from builtin.rbac.bootstrappolicy import AUTOUPDATE, cluster_role_bindings, cluster_roles
from builtin.rbac.index import GROUP
from builtin.rbac.rules import compile_rules, uncovered
from builtin.wants import WantsStores

log = logging.getLogger(__name__)
Reconcile = Callable[[dict[str, Any], dict[str, Any]], "dict[str, Any] | None"]


def reconcile_role(existing: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any] | None:
    """kube's computeReconciledRole without removing anything: the role ``existing`` should become, or None
    when it needs no change or must be left alone."""
    metadata = existing.setdefault("metadata", {})
    if (metadata.get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    changed = _merge_meta(metadata, expected["metadata"])
    if "aggregationRule" in expected:
        selectors = existing.setdefault("aggregationRule", {}).setdefault(
            "clusterRoleSelectors", []
        )
        for selector in expected["aggregationRule"]["clusterRoleSelectors"]:
            if selector not in selectors:
                selectors.append(selector)
                changed = True
    else:
        missing = uncovered(compile_rules(existing.get("rules")), compile_rules(expected["rules"]))
        if missing:
            existing["rules"] = list(existing.get("rules") or []) + [r.as_json() for r in missing]
            changed = True
    return existing if changed else None


def reconcile_binding(existing: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any] | None:
    """kube's computeReconciledRoleBinding without removing subjects (a changed roleRef is recreated by the
    caller)."""
    metadata = existing.setdefault("metadata", {})
    if (metadata.get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    changed = _merge_meta(metadata, expected["metadata"])
    subjects = existing.setdefault("subjects", [])
    for subject in expected["subjects"]:
        if subject not in subjects:
            subjects.append(subject)
            changed = True
    return existing if changed else None


def _merge_meta(metadata: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Add the expected labels and annotations a user removed; keep the values a user set."""
    changed = False
    for key in ("labels", "annotations"):
        current = metadata.setdefault(key, {})
        for name, value in expected[key].items():
            if name not in current:
                current[name] = value
                changed = True
    return changed


class BootstrapPolicy:
    """Reconciles the default policy once the stores are up; runs no loop."""

    post_start_hook = "rbac/bootstrap-roles"
    """kube's post-start hook of the same job: its health check passes once the policy is in place."""

    def __init__(self, context: WantsStores) -> None:
        self.context = context

    async def start(self) -> None:
        stores = self.context.stores
        served = set(stores)
        custom = [
            store.resource
            for store in stores.values()
            if not store.resource.builtin and store.resource.persisted
        ]
        roles = self.context.store(GROUP, "clusterroles")
        bindings = self.context.store(GROUP, "clusterrolebindings")
        for role in cluster_roles(served, custom):
            await _ensure(roles, role, reconcile_role)
        for binding in cluster_role_bindings():
            await _ensure(bindings, binding, reconcile_binding)

    async def stop(self) -> None:
        """Nothing runs after start."""


async def _ensure(store: Store, expected: dict[str, Any], reconcile: Reconcile) -> None:
    name = expected["metadata"]["name"]
    try:
        current = await store.get(None, name)
    except errors.APIError as error:
        if error.code != 404:
            raise
        try:
            await store.create(None, _copy(expected))
        except errors.APIError as error:
            if error.reason != "AlreadyExists":  # another replica (--workers) was first
                raise
        return
    if "roleRef" in expected and current.get("roleRef") != expected["roleRef"]:
        if (current["metadata"].get("annotations") or {}).get(AUTOUPDATE) != "false":
            log.info("recreating %s %s: its roleRef changed", store.resource.kind, name)
            await store.delete(None, name)
            await store.create(None, _copy(expected))
        return

    def update(obj: dict[str, Any]) -> dict[str, Any]:
        return reconcile(obj, expected) or obj

    if reconcile(_copy(current), expected) is not None:
        await store.update(None, name, update)


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(obj)
