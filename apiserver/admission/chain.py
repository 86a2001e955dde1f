"""The admission chain: every registered plugin, mutating ones run before validating ones (kube's
``admission.chainAdmissionHandler``, in the order the plugins were registered).

A plugin that says which kinds of writes it could ever act on (``Scoped.acts_on``) is left out of the chain
of every other kind and operation, worked out once per resource and operation: a CronTab's create does not
ask the RBAC escalation check whether it handles it. What is left is asked ``handles`` on every write, as
its answer can change while serving (a webhook configured, a policy bound)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from apiserver.admission.interface import (
    MutationInterface,
    Operation,
    Plugin,
    Scoped,
    ValidationInterface,
)

if TYPE_CHECKING:
    from apiserver.machinery.scheme import ResourceType

_Plan = tuple["ResourceType", tuple[MutationInterface, ...], tuple[ValidationInterface, ...]]
"""A resource, and its mutating and validating plugins for one operation."""
_PLANS_CAPACITY: Final = 1024
"""Resources and operations whose plugins a chain remembers (a CRD's new shape is a new resource)."""


class AdmissionChain:
    """Plugins in registration order; a plugin may be both mutating and validating."""

    def __init__(self, plugins: Iterable[Plugin] = ()) -> None:
        self.mutating: list[MutationInterface] = []
        self.validating: list[ValidationInterface] = []
        self._plans: dict[tuple[int, int], _Plan] = {}
        for plugin in plugins:
            self.add(plugin)

    def add(self, plugin: Plugin) -> None:
        if isinstance(plugin, MutationInterface):
            self.mutating.append(plugin)
        if isinstance(plugin, ValidationInterface):
            self.validating.append(plugin)
        self._plans.clear()

    def _plan(self, resource: ResourceType, operation: Operation) -> _Plan:
        """The mutating and the validating plugins that may act on ``operation`` of ``resource``, kept
        by the ids of both (an Enum's hash is a Python call)."""
        if len(self._plans) >= _PLANS_CAPACITY:
            self._plans.clear()
        plan = self._plans[(id(resource), id(operation))] = (
            resource,
            tuple(p for p in self.mutating if _may_act(p, resource, operation)),
            tuple(p for p in self.validating if _may_act(p, resource, operation)),
        )
        return plan

    def mutating_for(self, resource: ResourceType, operation: Operation) -> list[MutationInterface]:
        """The mutating plugins that handle this write now: none, on nearly every write, and then no
        attributes need to be built for it."""
        plan = self._plans.get((id(resource), id(operation)))
        if plan is None or plan[0] is not resource:
            plan = self._plan(resource, operation)
        return [p for p in plan[1] if p.handles(operation)]

    def validating_for(
        self, resource: ResourceType, operation: Operation
    ) -> list[ValidationInterface]:
        """The validating plugins that handle this write now."""
        plan = self._plans.get((id(resource), id(operation)))
        if plan is None or plan[0] is not resource:
            plan = self._plan(resource, operation)
        return [p for p in plan[2] if p.handles(operation)]


def _may_act(plugin: Plugin, resource: ResourceType, operation: Operation) -> bool:
    return not isinstance(plugin, Scoped) or plugin.acts_on(resource, operation)
