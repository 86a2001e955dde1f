"""Every write through a Store is admitted, whoever makes it: the mutating plugins, then validation, then the
validating plugins (kube's admission chain, run by the registry), with the write's attributes. These writes go
straight to the Store, as the bootstrap and controllers do, with no HTTP in between."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interface import Attributes, Operation
from apiserver.authentication.user import LOOPBACK, UserInfo
from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType, VersionType
from apiserver.registry.admit import WriteOptions
from apiserver.registry.store import Store
from apiserver.schema import validate
from apiserver.storage.memory import MemoryStorage

Object = dict[str, Any]
SCHEMA: Object = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {"size": {"type": "integer", "minimum": 0, "default": 1}},
        },
    },
}
GADGETS = ResourceType(
    group="example.com",
    kind="Gadget",
    plural="gadgets",
    singular="gadget",
    list_kind="GadgetList",
    namespaced=False,
    versions=(
        VersionType(
            name="v1",
            served=True,
            storage=True,
            schema=SCHEMA,
            defaulter=lambda obj: obj.setdefault("spec", {}).setdefault("size", 1),
            validator=lambda obj: validate(obj, SCHEMA),
        ),
    ),
)


class Recorder:
    """A plugin that is both mutating and validating: labels what it admits, refuses size 13, and records
    what it saw and when."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Operation, str, str, Any]] = []

    def handles(self, operation: Operation) -> bool:
        return True

    async def admit(self, attributes: Attributes) -> None:
        assert attributes.obj is not None
        self.seen.append(
            ("admit", attributes.operation, attributes.name, attributes.user.name, None)
        )
        attributes.obj["metadata"].setdefault("labels", {})["admitted"] = "yes"

    async def validate(self, attributes: Attributes) -> None:
        size = (attributes.obj or {}).get("spec", {}).get("size")
        self.seen.append(
            ("validate", attributes.operation, attributes.name, attributes.user.name, size)
        )
        if size == 13:
            raise errors.APIError(403, "Forbidden", "13 is unlucky")


def run(body: Callable[[Store, Recorder], Awaitable[None]]) -> None:
    async def main() -> None:
        recorder = Recorder()
        storage = MemoryStorage()
        await storage.start()
        try:
            await body(Store(GADGETS, storage, admission=AdmissionChain([recorder])), recorder)
        finally:
            await storage.close()

    asyncio.run(main())


def gadget(name: str, **spec: Any) -> Object:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_a_server_side_create_is_pruned_defaulted_mutated_and_validated() -> None:
    async def body(store: Store, recorder: Recorder) -> None:
        created = await store.create(None, {**gadget("g"), "junk": 1})
        assert "junk" not in created  # pruned, silently for the server's own writes
        assert created["spec"] == {"size": 1}  # defaulted
        assert created["metadata"]["labels"] == {"admitted": "yes"}  # the mutating plugin ran
        # mutating before validating, both as the loopback user, the validating one on the final object
        assert recorder.seen == [
            ("admit", Operation.CREATE, "g", LOOPBACK.name, None),
            ("validate", Operation.CREATE, "g", LOOPBACK.name, 1),
        ]
        with pytest.raises(errors.APIError) as invalid:
            await store.create(None, gadget("bad", size=-1))
        assert invalid.value.code == 422 and invalid.value.reason == "Invalid"

    run(body)


def test_a_validating_plugin_refuses_an_update_and_nothing_is_stored() -> None:
    async def body(store: Store, recorder: Recorder) -> None:
        await store.create(None, gadget("g", size=2))
        user = UserInfo("jane", groups=("devs",))

        def to_13(current: Object) -> Object:
            current["spec"]["size"] = 13
            return current

        with pytest.raises(errors.APIError) as refused:
            await store.update(None, "g", to_13, options=WriteOptions(user=user))
        assert refused.value.code == 403
        assert (await store.get(None, "g"))["spec"]["size"] == 2
        assert recorder.seen[-2:] == [
            ("admit", Operation.UPDATE, "g", "jane", None),
            ("validate", Operation.UPDATE, "g", "jane", 13),
        ]

    run(body)


def test_a_delete_is_validated_with_the_stored_object_as_old() -> None:
    async def body(store: Store, recorder: Recorder) -> None:
        await store.create(None, gadget("g", size=2))
        _, gone = await store.delete(None, "g")
        assert gone
        assert recorder.seen[-1] == ("validate", Operation.DELETE, "g", LOOPBACK.name, None)

    run(body)


def test_strict_field_validation_refuses_unknown_fields_of_a_client_write() -> None:
    async def body(store: Store, recorder: Recorder) -> None:
        strict = WriteOptions(field_validation="Strict")
        with pytest.raises(errors.APIError) as refused:
            await store.create(None, {**gadget("g"), "junk": 1}, options=strict)
        assert refused.value.code == 400
        assert 'strict decoding error: unknown field "junk"' in refused.value.message
        warn = WriteOptions(field_validation="Warn")
        await store.create(None, {**gadget("g"), "junk": 1}, options=warn)
        assert warn.warnings == ['unknown field "junk"']

    run(body)
