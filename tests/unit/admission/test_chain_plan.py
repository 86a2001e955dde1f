"""A plugin that says which writes it could ever act on (``acts_on``) is left out of the chain of every other
resource and operation: it is neither asked whether it handles them nor run; every other plugin is asked
``handles`` on each write, as before, since its answer may change while serving."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Attributes, Operation
from apiserver.machinery.scheme import ResourceType
from apiserver.registry.store import Store
from apiserver.storage.memory import MemoryStorage
from tests.widgets import WIDGETS

GADGETS = replace(
    WIDGETS, kind="Gadget", plural="gadgets", singular="gadget", list_kind="GadgetList"
)


class Everything:
    """A plain plugin, asked on every write; counts what it is asked and what it sees."""

    def __init__(self) -> None:
        self.asked: list[Operation] = []
        self.validated: list[str] = []

    def handles(self, operation: Operation) -> bool:
        self.asked.append(operation)
        return True

    async def validate(self, attributes: Attributes) -> None:
        self.validated.append(f"{attributes.resource.plural}/{attributes.name}")


class WidgetCreates(Everything):
    """Acts on creates of widgets only."""

    def acts_on(self, resource: ResourceType, operation: Operation) -> bool:
        return resource.plural == "widgets" and operation is Operation.CREATE


def test_a_scoped_plugin_is_asked_only_about_the_writes_it_acts_on() -> None:
    scoped, unscoped = WidgetCreates(), Everything()
    chain = AdmissionChain([scoped, unscoped])

    async def main() -> None:
        storage = MemoryStorage()
        await storage.start()
        try:
            widgets, gadgets = (Store(r, storage, admission=chain) for r in (WIDGETS, GADGETS))
            await gadgets.create(None, {"metadata": {"name": "g"}})
            await widgets.create(None, {"metadata": {"name": "w"}})
            await widgets.delete(None, "w")
        finally:
            await storage.close()

    asyncio.run(main())
    assert scoped.asked == [Operation.CREATE]
    assert scoped.validated == ["widgets/w"]
    assert unscoped.asked == [Operation.CREATE, Operation.CREATE, Operation.DELETE]
    assert unscoped.validated == ["gadgets/g", "widgets/w", "widgets/w"]


def test_a_plugin_added_later_joins_the_writes_already_planned() -> None:
    first, later = WidgetCreates(), WidgetCreates()
    chain = AdmissionChain([first])
    assert chain.validating_for(WIDGETS, Operation.CREATE) == [first]
    assert chain.validating_for(GADGETS, Operation.CREATE) == []
    chain.add(later)
    assert chain.validating_for(WIDGETS, Operation.CREATE) == [first, later]
    assert chain.validating_for(WIDGETS, Operation.UPDATE) == []
