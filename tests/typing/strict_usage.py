"""How a program uses the typed clients, checked by ``mypy --strict`` (tests/unit/test_client_typing.py):
every call's result is the kind's model, not ``Any``, as ``assert_type`` makes mypy prove. Never run."""

from __future__ import annotations

from typing import Any, assert_type

from apiclient import (
    AsyncConnection,
    Connection,
    DeletedFinalStateUnknown,
    Informer,
    Lister,
    Page,
    WatchEvent,
    extract,
    load_kubeconfig,
)
from apiclient.errors import Conflict, NotFound
from generated.core.v1.client import configmaps
from generated.core.v1.models import ConfigMap
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import crontabs, crontabs_async
from generated.stable_example_com.v1.models import CronTab, CronTabSpec


def sync_usage(connection: Connection) -> int:
    tabs = crontabs(connection)
    tab = tabs.create(
        CronTab(metadata=ObjectMeta(name="a", namespace="default"), spec=CronTabSpec(image="nginx"))
    )
    assert_type(tab, CronTab)
    assert_type(tabs.get("a", "default"), CronTab)
    assert_type(tabs.list("default", label_selector="app=x"), list[CronTab])
    assert_type(tabs.list_page("default", limit=10), Page[CronTab])
    assert_type(tabs.patch("a", {"spec": {"replicas": 2}}, "default"), CronTab)
    applied = tabs.apply(extract(tab, "me"), field_manager="me", force=True)
    assert_type(applied, CronTab)
    try:
        tabs.update(tab)
    except Conflict as conflict:
        assert_type(conflict.causes, list[dict[str, Any]])
    except NotFound:
        return 0
    for event in tabs.watch("default", resource_version="1"):
        assert_type(event, WatchEvent[CronTab])
        if event.object.spec is not None and event.object.spec.replicas is not None:
            return event.object.spec.replicas
    maps = configmaps(connection)
    assert_type(maps.get("m", "default"), ConfigMap)
    tabs.delete("a", "default", propagation_policy="Foreground")
    return 0


async def async_usage() -> list[str]:
    async with AsyncConnection(load_kubeconfig()) as connection:
        tabs = crontabs_async(connection)
        assert_type(await tabs.get("a", "default"), CronTab)
        names = [
            tab.metadata.name
            async for tab in tabs.iterate("default")
            if tab.metadata and tab.metadata.name
        ]
        async for event in tabs.watch("default"):
            assert_type(event.object, CronTab)
        informer = Informer(
            tabs,
            "default",
            indexers={"image": lambda tab: [tab.spec.image or ""] if tab.spec else []},
        )

        def deleted(obj: CronTab | DeletedFinalStateUnknown[CronTab]) -> None:
            if isinstance(obj, DeletedFinalStateUnknown):
                assert_type(obj.object, CronTab)

        informer.add_event_handler(on_add=lambda tab: None, on_delete=deleted)
        informer.start()
        await informer.wait_for_cache_sync(10)
        lister = informer.lister()
        assert_type(lister, Lister[CronTab])
        assert_type(lister.get("a", "default"), CronTab | None)
        assert_type(lister.list("app=x", namespace="default"), list[CronTab])
        assert_type(lister.by_index("image", "nginx"), list[CronTab])
        await informer.stop()
        return names
