"""The generated asyncio clients (``<plural>_async`` over ``apiclient.AsyncConnection``) against a real server
over TLS: the same verbs as the sync clients, awaited; ``iterate`` and ``watch`` are async iterators; refusals
are kube's errors. Each test runs its scenario in ``asyncio.run``."""

from __future__ import annotations

import asyncio

import pytest

from apiclient import AsyncConnection, load_kubeconfig
from apiclient.errors import AlreadyExists, Conflict, Invalid, NotFound
from generated.core.v1.client import configmaps_async
from generated.core.v1.models import ConfigMap
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import crontabs_async
from generated.stable_example_com.v1.models import CronTab, CronTabSpec
from tests.serverproc import ServerProcess

NAMESPACE = "default"


def crontab(name: str, replicas: int = 1) -> CronTab:
    return CronTab(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels={"app": "async"}),
        spec=CronTabSpec(cron_spec="* * * * */5", image="nginx", replicas=replicas),
    )


def test_every_verb_awaited_returns_models(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with AsyncConnection(load_kubeconfig(server.kubeconfig)) as connection:
            tabs = crontabs_async(connection)
            created = await tabs.create(crontab("async-one"))
            assert isinstance(created, CronTab) and created.metadata is not None
            assert created.metadata.uid and created.metadata.resource_version
            fetched = await tabs.get("async-one", NAMESPACE)
            assert fetched.spec is not None
            fetched.spec.replicas = 2
            updated = await tabs.update(fetched)
            assert updated.spec is not None and updated.spec.replicas == 2
            with pytest.raises(Conflict):
                await tabs.update(created)  # conditioned on its older resourceVersion
            patched = await tabs.patch("async-one", {"spec": {"image": "busybox"}}, NAMESPACE)
            assert patched.spec is not None and patched.spec.image == "busybox"
            json_patched = await tabs.patch(
                "async-one",
                [{"op": "replace", "path": "/spec/replicas", "value": 3}],
                NAMESPACE,
                type="json",
            )
            assert json_patched.spec is not None and json_patched.spec.replicas == 3
            applied = await tabs.apply(
                {
                    "metadata": {"name": "async-one", "namespace": NAMESPACE},
                    "spec": {"replicas": 4},
                },
                field_manager="async-test",
                force=True,
            )
            assert applied.spec is not None and applied.spec.replicas == 4
            assert applied.metadata is not None
            assert "async-test" in {
                entry.manager for entry in applied.metadata.managed_fields or []
            }
            with pytest.raises(AlreadyExists):
                await tabs.create(crontab("async-one"))
            with pytest.raises(Invalid) as invalid:
                await tabs.patch("async-one", {"spec": {"replicas": -1}}, NAMESPACE)
            assert [cause["field"] for cause in invalid.value.causes] == [
                "spec.replicas",
                ".spec.replicas",
            ]
            await tabs.delete("async-one", NAMESPACE, dry_run=True)
            assert (await tabs.get("async-one", NAMESPACE)).metadata is not None
            await tabs.delete("async-one", NAMESPACE)
            with pytest.raises(NotFound) as missing:
                await tabs.get("async-one", NAMESPACE)
            assert missing.value.message == 'crontabs.stable.example.com "async-one" not found'

    asyncio.run(scenario())


def test_iterate_pages_through_continue_tokens(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with AsyncConnection(load_kubeconfig(server.kubeconfig)) as connection:
            maps = configmaps_async(connection)
            names = {f"async-page-{index}" for index in range(5)}
            for name in names:
                await maps.create(
                    ConfigMap(metadata=ObjectMeta(name=name, labels={"page": "async"})), NAMESPACE
                )
            first = await maps.list_page(NAMESPACE, label_selector="page=async", limit=2)
            assert len(first.items) == 2 and first.continue_token and first.resource_version
            seen = [
                item.metadata.name
                async for item in maps.iterate(NAMESPACE, label_selector="page=async", limit=2)
                if item.metadata and item.metadata.name
            ]
            assert sorted(seen) == sorted(names)
            await maps.delete_collection(NAMESPACE, label_selector="page=async")
            assert await maps.list(NAMESPACE, label_selector="page=async") == []

    asyncio.run(scenario())


def test_watch_is_an_async_iterator_of_typed_events(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with AsyncConnection(load_kubeconfig(server.kubeconfig)) as connection:
            maps = configmaps_async(connection)
            start = await maps.create(
                ConfigMap(metadata=ObjectMeta(name="async-watched"), data={"n": "0"}), NAMESPACE
            )
            assert start.metadata is not None
            await maps.patch("async-watched", {"data": {"n": "1"}}, NAMESPACE)
            await maps.delete("async-watched", NAMESPACE)
            events = []
            async for event in maps.watch(
                NAMESPACE,
                resource_version=start.metadata.resource_version,
                field_selector="metadata.name=async-watched",
                timeout_seconds=5,
                bookmarks=False,
            ):
                events.append(event)
                if event.type == "DELETED":
                    break
            assert [event.type for event in events] == ["MODIFIED", "DELETED"]
            assert isinstance(events[0].object, ConfigMap) and events[0].object.data == {"n": "1"}

    asyncio.run(scenario())
