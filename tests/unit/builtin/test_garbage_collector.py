"""The garbage collector and DELETE's propagation policies, in kube's words and with kube's outcomes
(k8s.io/apiserver registry/generic/registry/store.go for the finalizers, pkg/controller/garbagecollector for
what happens to dependents; test/integration/garbagecollector in kubernetes for the scenarios)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiserver.registry.store import ListOptions
from apiserver.server.app import APIServer
from apiserver.storage import open_storage
from builtin.garbagecollector.collector import GarbageCollector
from generated.server import OPENAPI_DIR, build_apis
from tests.inprocess import InProcessServer

CM = "/api/v1/namespaces/{ns}/configmaps"
WAIT = 10.0
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap"}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as client:
        yield client


def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"never: {what}")
        time.sleep(0.02)


def owner_ref(obj: dict[str, Any], block: bool = False) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def configmap(
    client: httpx.Client,
    name: str,
    owners: list[dict[str, Any]] = (),
    ns: str = "default",
    **meta: Any,
) -> dict[str, Any]:  # type: ignore[assignment]
    body = {"metadata": {"name": name, "ownerReferences": list(owners), **meta}}
    response = client.post(CM.format(ns=ns), json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def exists(client: httpx.Client, name: str, ns: str = "default") -> bool:
    return client.get(f"{CM.format(ns=ns)}/{name}").status_code == 200


def get(client: httpx.Client, name: str, ns: str = "default") -> dict[str, Any]:
    response = client.get(f"{CM.format(ns=ns)}/{name}")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def delete(client: httpx.Client, name: str, ns: str = "default", **options: Any) -> httpx.Response:
    return client.request("DELETE", f"{CM.format(ns=ns)}/{name}", json=options or None)


def test_background_deletes_dependents_after_the_owner(client: httpx.Client) -> None:
    owner = configmap(client, "bg-owner")
    for i in range(3):
        configmap(client, f"bg-dep-{i}", [owner_ref(owner)])
    assert delete(client, "bg-owner", propagationPolicy="Background").status_code == 200
    assert not exists(client, "bg-owner")
    until(lambda: not any(exists(client, f"bg-dep-{i}") for i in range(3)), "dependents collected")


def test_foreground_keeps_the_owner_until_blocking_dependents_are_gone(
    client: httpx.Client,
) -> None:
    owner = configmap(client, "fg-owner")
    # a dependent held by a finalizer of its own keeps the owner waiting (blockOwnerDeletion)
    configmap(client, "fg-held", [owner_ref(owner, block=True)], finalizers=["example.com/hold"])
    configmap(client, "fg-dep", [owner_ref(owner, block=True)])
    response = delete(client, "fg-owner", propagationPolicy="Foreground")
    assert response.status_code == 200
    marked = response.json()["metadata"]
    assert marked["finalizers"] == ["foregroundDeletion"] and marked["deletionTimestamp"]
    until(lambda: not exists(client, "fg-dep"), "the free dependent collected")
    until(lambda: bool(get(client, "fg-held")["metadata"].get("deletionTimestamp")), "held marked")
    assert exists(client, "fg-owner")  # still waiting for fg-held
    held = get(client, "fg-held")
    held["metadata"]["finalizers"] = []
    assert client.put(f"{CM.format(ns='default')}/fg-held", json=held).status_code == 200
    until(lambda: not exists(client, "fg-owner"), "the owner removed once its dependents are gone")


def test_orphan_removes_the_owner_references_first(client: httpx.Client) -> None:
    owner = configmap(client, "or-owner")
    other = configmap(client, "or-other")
    configmap(client, "or-dep", [owner_ref(owner), owner_ref(other)])
    configmap(client, "or-only", [owner_ref(owner)])
    assert delete(client, "or-owner", propagationPolicy="Orphan").status_code == 200
    until(lambda: not exists(client, "or-owner"), "the owner gone")
    assert [r["name"] for r in get(client, "or-dep")["metadata"]["ownerReferences"]] == ["or-other"]
    assert "ownerReferences" not in get(client, "or-only")["metadata"]


def test_the_deprecated_orphan_dependents(client: httpx.Client) -> None:
    owner = configmap(client, "od-owner")
    configmap(client, "od-dep", [owner_ref(owner)])
    assert delete(client, "od-owner", orphanDependents=True).status_code == 200
    until(lambda: not exists(client, "od-owner"), "the owner gone")
    assert "ownerReferences" not in get(client, "od-dep")["metadata"]


def test_propagation_from_the_query(client: httpx.Client) -> None:
    owner = configmap(client, "q-owner")
    configmap(client, "q-dep", [owner_ref(owner)])
    response = client.delete(f"{CM.format(ns='default')}/q-owner?propagationPolicy=Orphan")
    assert response.json()["metadata"]["finalizers"] == ["orphan"]
    until(lambda: not exists(client, "q-owner"), "the owner gone")
    assert exists(client, "q-dep")


def test_a_dangling_owner_reference_is_collected(client: httpx.Client) -> None:
    missing = {"apiVersion": "v1", "kind": "ConfigMap", "name": "nobody", "uid": "no-such-uid"}
    configmap(client, "dangling", [missing])
    until(lambda: not exists(client, "dangling"), "the dependent of a missing owner collected")


def test_a_reference_to_a_live_owner_of_another_uid_is_dangling(client: httpx.Client) -> None:
    configmap(client, "reborn")
    stale = {"apiVersion": "v1", "kind": "ConfigMap", "name": "reborn", "uid": "an-older-uid"}
    configmap(client, "stale-dep", [stale])
    until(lambda: not exists(client, "stale-dep"), "collected: the named owner has another uid")
    assert exists(client, "reborn")


def test_cycles_end_without_hanging(client: httpx.Client) -> None:
    a = configmap(client, "cycle-a")
    b = configmap(client, "cycle-b", [owner_ref(a, block=True)])
    a["metadata"]["ownerReferences"] = [owner_ref(b, block=True)]
    assert client.put(f"{CM.format(ns='default')}/cycle-a", json=a).status_code == 200
    assert delete(client, "cycle-a", propagationPolicy="Foreground").status_code == 200
    until(lambda: not exists(client, "cycle-a") and not exists(client, "cycle-b"), "the cycle gone")


def test_a_cross_namespace_owner_is_reported_and_the_dependent_collected(
    client: httpx.Client,
) -> None:
    owner = configmap(client, "xns-owner", ns="kube-public")
    dep = configmap(client, "xns-dep", [owner_ref(owner)])
    until(lambda: not exists(client, "xns-dep"), "collected: the owner is not in its namespace")
    assert exists(client, "xns-owner", ns="kube-public")
    events = client.get(
        "/api/v1/namespaces/default/events",
        params={"fieldSelector": f"involvedObject.uid={dep['metadata']['uid']}"},
    ).json()["items"]
    assert [e["reason"] for e in events] == ["OwnerRefInvalidNamespace"]
    assert events[0]["type"] == "Warning"
    assert events[0]["message"] == (
        f"ownerRef [v1/ConfigMap, namespace: default, name: xns-owner, uid: "
        f'{owner["metadata"]["uid"]}] does not exist in namespace "default"'
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"propagationPolicy": "Bogus"},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": '
            'supported values: "Foreground", "Background", "Orphan", "nil"',
        ),
        (
            {"propagationPolicy": "Orphan", "orphanDependents": True},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
            "orphanDependents and deletionPropagation cannot be both set",
        ),
    ],
)
def test_bad_propagation_is_refused_as_kube_does(
    client: httpx.Client, options: dict[str, Any], message: str
) -> None:
    """A 422 on DeleteOptions.meta.k8s.io, not a 400: kube's delete handler wraps ValidateDeleteOptions'
    field errors in NewInvalid (apimachinery pkg/apis/meta/v1/validation, apiserver handlers/delete.go)."""
    configmap(client, f"bad-{len(options)}")
    response = delete(client, f"bad-{len(options)}", **options)
    assert response.status_code == 422
    assert response.json()["message"] == message
    assert exists(client, f"bad-{len(options)}")


def test_a_wrongly_typed_policy_is_a_bad_request(client: httpx.Client) -> None:
    configmap(client, "bad-type")
    assert delete(client, "bad-type", propagationPolicy=3).status_code == 400


def test_a_query_orphan_dependents_is_true_unless_false_or_0(client: httpx.Client) -> None:
    """kube's parameter codec reads a *bool query parameter as true unless it is "0" or "false" in any
    case (apimachinery runtime/conversion.go Convert_Slice_string_To_Pointer_bool): never a 400."""
    configmap(client, "maybe-orphan")
    response = client.delete(f"{CM.format(ns='default')}/maybe-orphan?orphanDependents=maybe")
    assert response.status_code == 200, response.text
    assert exists(client, "bad-type")


def test_work_left_by_a_stopped_server_is_done_by_the_next(tmp_path: Path) -> None:
    """Across restarts: the owner is deleted while no collector runs (it had stopped first, as a crash
    would leave it); the next server, on the same SQLite, collects the dependents from what is stored."""

    async def body() -> None:
        first = APIServer(build_apis(), open_storage("sqlite", tmp_path), OPENAPI_DIR)
        await first.start()
        store = first.context.store("", "configmaps")
        owner = await store.create("default", {**CONFIGMAP, "metadata": {"name": "restart-owner"}})
        for i in range(3):
            meta = {"name": f"restart-dep-{i}", "ownerReferences": [owner_ref(owner)]}
            await store.create("default", {**CONFIGMAP, "metadata": meta})
        [collector] = [c for c in first.controllers if isinstance(c, GarbageCollector)]
        await collector.stop()
        await store.delete("default", "restart-owner")
        await first.stop()
        second = APIServer(build_apis(), open_storage("sqlite", tmp_path), OPENAPI_DIR)
        await second.start()
        store = second.context.store("", "configmaps")
        for _ in range(500):
            left = [
                item["metadata"]["name"]
                for item in (await store.list("default", ListOptions())).items
                if item["metadata"]["name"].startswith("restart-dep-")
            ]
            if not left:
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail(f"never collected: {left}")
        await second.stop()

    asyncio.run(asyncio.wait_for(body(), timeout=20))
