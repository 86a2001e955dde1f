"""An in-process admission plugin (what a definition's ``admissionHooks:`` and the server's own plugins are)
cannot change an object's identity either: the Store, which every write goes through, refuses as kube's
BeforeCreate and BeforeUpdate do (k8s.io/apiserver/pkg/registry/rest/create.go, update.go), and stores
nothing."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Attributes, Operation
from apiserver.machinery import errors
from apiserver.registry.store import Store
from apiserver.storage.memory import MemoryStorage
from tests.unit.admission.test_store_admission import GADGETS

NAMESPACED = replace(GADGETS, namespaced=True)
CHANGED = {"namespace": "kube-system", "name": "renamed", "uid": "forged"}


class Setter:
    """A mutating plugin that sets one metadata field on the operations it handles."""

    def __init__(self, field: str, operation: Operation) -> None:
        self.field, self.operation = field, operation

    def handles(self, operation: Operation) -> bool:
        return operation is self.operation

    async def admit(self, attributes: Attributes) -> None:
        assert attributes.obj is not None
        attributes.obj["metadata"][self.field] = CHANGED[self.field]


def gadget(name: str) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name}}


def test_a_plugin_moving_a_create_to_another_namespace_is_400_and_stores_nothing() -> None:
    async def run() -> None:
        storage = MemoryStorage()
        store = Store(
            NAMESPACED, storage, admission=AdmissionChain([Setter("namespace", Operation.CREATE)])
        )
        with pytest.raises(errors.APIError) as refused:
            await store.create("default", gadget("moved"))
        assert (refused.value.code, refused.value.reason) == (400, "BadRequest")
        assert refused.value.message == (
            "the namespace of the provided object does not match the namespace sent on the request"
        )
        assert (await storage.list("/registry/")).items == []

    asyncio.run(run())


@pytest.mark.parametrize("field", ["namespace", "name", "uid"])
def test_a_plugin_changing_identity_on_update_gets_kubes_answer(field: str) -> None:
    async def run() -> None:
        storage = MemoryStorage()
        store = Store(
            NAMESPACED, storage, admission=AdmissionChain([Setter(field, Operation.UPDATE)])
        )
        stored = await store.create("default", gadget("kept"))
        with pytest.raises(errors.APIError) as refused:
            await store.update("default", "kept", lambda current: {**current, "spec": {"size": 2}})
        if field == "namespace":
            assert (refused.value.code, refused.value.reason) == (400, "BadRequest")
        else:
            shown = CHANGED["name"] if field == "name" else "kept"
            assert (refused.value.code, refused.value.reason) == (422, "Invalid")
            assert refused.value.message == (
                f'Gadget.example.com "{shown}" is invalid: metadata.{field}: Invalid value: '
                f'"{CHANGED[field]}": field is immutable'
            )
        assert await store.get("default", "kept") == stored
        assert len((await storage.list("/registry/")).items) == 1

    asyncio.run(run())
