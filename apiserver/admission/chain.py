"""The admission chain: every registered plugin, mutating ones run before validating ones (kube's
``admission.chainAdmissionHandler``, in the order the plugins were registered)."""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.admission.interface import (
    Attributes,
    MutationInterface,
    Operation,
    Plugin,
    ValidationInterface,
)


class AdmissionChain:
    """Plugins in registration order; a plugin may be both mutating and validating."""

    def __init__(self, plugins: Iterable[Plugin] = ()) -> None:
        self.mutating: list[MutationInterface] = []
        self.validating: list[ValidationInterface] = []
        for plugin in plugins:
            self.add(plugin)

    def add(self, plugin: Plugin) -> None:
        if isinstance(plugin, MutationInterface):
            self.mutating.append(plugin)
        if isinstance(plugin, ValidationInterface):
            self.validating.append(plugin)

    def mutates(self, operation: Operation) -> bool:
        """Whether a mutating plugin handles ``operation``: a write no plugin would see needs no
        attributes built for it (mutating policies and webhooks handle writes only once bound)."""
        return any(plugin.handles(operation) for plugin in self.mutating)

    async def admit(self, attributes: Attributes) -> None:
        for plugin in self.mutating:
            if plugin.handles(attributes.operation):
                await plugin.admit(attributes)

    async def validate(self, attributes: Attributes) -> None:
        for plugin in self.validating:
            if plugin.handles(attributes.operation):
                await plugin.validate(attributes)
