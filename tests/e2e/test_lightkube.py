"""lightkube against a real apiforge server: a generic CronTab from `create_namespaced_resource` (create, get,
list, merge patch, subresources, server-side apply, watch, wait) and its typed core models
(API-CONVENTIONS.md §12)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from lightkube import Client, KubeConfig
from lightkube.core.exceptions import ApiError
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models.core_v1 import ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap, Event
from lightkube.types import PatchType

from tests.serverproc import ServerProcess

pytestmark = pytest.mark.timeout(60)

NAMESPACE = "default"
CronTab = create_namespaced_resource("stable.example.com", "v1", "CronTab", "crontabs")


def crontab(name: str, **spec: Any) -> Any:
    return CronTab(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE),
        spec={"cronSpec": "* * * * */5", "image": "lk-image", "replicas": 1, **spec},
    )


@pytest.fixture(scope="module")
def lk(server: ServerProcess) -> Iterator[Client]:
    lightkube = Client(
        config=KubeConfig.from_file(server.kubeconfig), namespace=NAMESPACE, field_manager="lk-test"
    )
    yield lightkube
    lightkube.close()


def test_create_get_list_patch_delete(lk: Client) -> None:
    created = lk.create(crontab("lk-crud"))
    assert isinstance(created, CronTab)
    assert created.metadata.uid and created.metadata.resourceVersion
    assert created.metadata.generation == 1

    with pytest.raises(ApiError) as exists:
        lk.create(crontab("lk-crud"))
    assert (exists.value.status.code, exists.value.status.reason) == (409, "AlreadyExists")

    got = lk.get(CronTab, "lk-crud")
    assert got.spec == {"cronSpec": "* * * * */5", "image": "lk-image", "replicas": 1}
    assert "lk-crud" in [item.metadata.name for item in lk.list(CronTab)]
    assert "lk-crud" in [item.metadata.name for item in lk.list(CronTab, namespace="*")]

    patched = lk.patch(
        CronTab,
        "lk-crud",
        {"metadata": {"labels": {"by": "lightkube"}}, "spec": {"image": "lk-patched"}},
        patch_type=PatchType.MERGE,
    )
    assert patched.spec["image"] == "lk-patched" and patched.metadata.generation == 2
    assert [item.metadata.name for item in lk.list(CronTab, labels={"by": "lightkube"})] == [
        "lk-crud"
    ]
    chunked = list(lk.list(CronTab, chunk_size=1, namespace="*"))  # limit + continue
    assert "lk-crud" in [item.metadata.name for item in chunked]

    # patch() defaults to strategic merge patch, which a compact-format kind takes as a built-in type does
    assert lk.patch(CronTab, "lk-crud", {"spec": {"replicas": 2}}).spec["replicas"] == 2

    json_patched = lk.patch(
        CronTab,
        "lk-crud",
        [{"op": "replace", "path": "/spec/replicas", "value": 3}],
        patch_type=PatchType.JSON,
    )
    assert json_patched.spec["replicas"] == 3

    got.spec["replicas"] = 9  # a stale resourceVersion
    with pytest.raises(ApiError) as stale:
        lk.replace(got)
    assert stale.value.status.code == 409

    lk.delete(CronTab, "lk-crud")
    with pytest.raises(ApiError) as missing:
        lk.get(CronTab, "lk-crud")
    assert missing.value.status.code == 404
    assert missing.value.status.message == 'crontabs.stable.example.com "lk-crud" not found'


def test_status_and_scale_subresources(lk: Client) -> None:
    lk.create(crontab("lk-sub", replicas=2))
    status = lk.patch(
        CronTab.Status,
        "lk-sub",
        {"status": {"replicas": 2, "labelSelector": "app=lk"}},
        patch_type=PatchType.MERGE,
    )
    assert status.status == {"replicas": 2, "labelSelector": "app=lk"}
    scale = lk.get(CronTab.Scale, "lk-sub")
    assert scale.spec.replicas == 2 and scale.status.replicas == 2
    assert scale.status.selector == "app=lk"
    lk.patch(CronTab.Scale, "lk-sub", {"spec": {"replicas": 4}}, patch_type=PatchType.MERGE)
    assert lk.get(CronTab, "lk-sub").spec["replicas"] == 4
    lk.delete(CronTab, "lk-sub")


def test_server_side_apply(lk: Client) -> None:
    applied = lk.apply(crontab("lk-apply"), field_manager="lk-apply", force=True)
    assert applied.spec["image"] == "lk-image"
    owners = {entry.manager: entry for entry in applied.metadata.managedFields or []}
    assert owners["lk-apply"].operation == "Apply"

    updated = lk.apply(
        crontab("lk-apply", image="lk-image-2"), field_manager="lk-apply", force=True
    )
    assert updated.spec["image"] == "lk-image-2"
    assert int(updated.metadata.resourceVersion) > int(applied.metadata.resourceVersion)

    # another manager without force: 409 naming the field; with force it takes it over
    with pytest.raises(ApiError) as conflict:
        lk.apply(crontab("lk-apply", image="other"), field_manager="lk-other")
    assert (conflict.value.status.code, conflict.value.status.reason) == (409, "Conflict")
    forced = lk.apply(crontab("lk-apply", image="other"), field_manager="lk-other", force=True)
    assert forced.spec["image"] == "other"
    lk.delete(CronTab, "lk-apply")


def test_watch_replays_and_follows(lk: Client) -> None:
    listing = lk.list(CronTab)
    list(listing)
    start = listing.resourceVersion
    lk.create(crontab("lk-watch"))
    lk.patch(CronTab, "lk-watch", {"spec": {"image": "w2"}}, patch_type=PatchType.MERGE)

    def delete_later() -> None:
        time.sleep(0.5)
        lk.delete(CronTab, "lk-watch")

    deleter = threading.Thread(target=delete_later)
    deleter.start()
    seen: list[tuple[str, str, str]] = []
    for kind, obj in lk.watch(CronTab, resource_version=start, server_timeout=10):
        seen.append((kind, obj.metadata.name, obj.spec["image"]))
        if kind == "DELETED":
            break
    deleter.join()
    assert seen == [
        ("ADDED", "lk-watch", "lk-image"),
        ("MODIFIED", "lk-watch", "w2"),
        ("DELETED", "lk-watch", "w2"),
    ]


def test_wait_for_a_condition(lk: Client) -> None:
    lk.create(crontab("lk-wait"))

    def become_ready() -> None:
        time.sleep(0.5)
        condition = {
            "type": "Ready",
            "status": "True",
            "reason": "Reconciled",
            "message": "ready",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
        }
        lk.patch(
            CronTab.Status,
            "lk-wait",
            {"status": {"conditions": [condition]}},
            patch_type=PatchType.MERGE,
        )

    writer = threading.Thread(target=become_ready)
    writer.start()
    ready = lk.wait(CronTab, "lk-wait", for_conditions=["Ready"])
    writer.join()
    assert ready.status["conditions"][0]["type"] == "Ready"
    lk.delete(CronTab, "lk-wait")


def test_typed_core_models(lk: Client) -> None:
    created = lk.create(ConfigMap(metadata=ObjectMeta(name="lk-cm"), data={"k": "v"}))
    assert created.data == {"k": "v"}
    patched = lk.patch(ConfigMap, "lk-cm", {"data": {"k2": "v2"}})  # strategic merge, a built-in
    assert patched.data == {"k": "v", "k2": "v2"}
    event = lk.create(
        Event(
            metadata=ObjectMeta(generateName="lk-event-"),
            involvedObject=ObjectReference(kind="ConfigMap", name="lk-cm", namespace=NAMESPACE),
            reason="Tested",
            message="from lightkube",
            type="Normal",
        )
    )
    assert event.metadata.name.startswith("lk-event-")
    found = list(lk.list(Event, fields={"involvedObject.name": "lk-cm"}))
    assert [e.message for e in found] == ["from lightkube"]
    lk.delete(ConfigMap, "lk-cm")
    with pytest.raises(ApiError) as missing:
        lk.get(ConfigMap, "lk-cm")
    assert missing.value.status.code == 404
