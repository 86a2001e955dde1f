"""The official `kubernetes` Python client against a real apiforge server: the DynamicClient (discovery, CRUD,
merge patch, watch, 410 on a compacted resourceVersion, scale and status subresources, server-side apply) and
the typed CoreV1Api for ConfigMaps and Events (API-CONVENTIONS.md §8, §12)."""

from __future__ import annotations

import gc
import json
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.resource import Resource

from tests.compaction import wait_compacted
from tests.serverproc import ServerProcess, free_port

# kubernetes 37's REST layer reads every response with urllib3's preload_content=False; now and then one of
# its pooled connections is dropped without being closed (seen on the DynamicClient's first discovery
# request), and the garbage collector then warns about the socket in whatever test runs at that moment.
# That is the client library's socket, not the server's: tolerated here, and collected at the end of the
# module (see `api_client`) so that it cannot surface in another module's test. The server speaks TLS, so the
# dropped socket is an ssl.SSLSocket as often as a plain one.
UNCLOSED_CLIENT_SOCKET = r"ignore:unclosed <(socket\.socket|ssl\.SSLSocket):ResourceWarning"
pytestmark = [pytest.mark.timeout(120), pytest.mark.filterwarnings(UNCLOSED_CLIENT_SOCKET)]

NAMESPACE = "default"
GROUP_VERSION = "stable.example.com/v1"
MERGE = "application/merge-patch+json"


def crontab(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "* * * * */5", "image": "my-cron-image", "replicas": 1, **spec},
    }


def new_dynamic_client(kubeconfig: Path, cache_dir: Path) -> tuple[client.ApiClient, Any]:
    api = config.new_client_from_config(config_file=str(kubeconfig))
    # a discovery cache of its own: the default one lives in the system temp dir, keyed by host
    return api, dynamic.DynamicClient(api, cache_file=str(cache_dir / "discovery.json"))


@pytest.fixture(scope="module")
def api_client(
    server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[client.ApiClient, Any]]:
    api, dyn = new_dynamic_client(server.kubeconfig, tmp_path_factory.mktemp("discovery"))
    yield api, dyn
    close_api_client(api)


def close_api_client(api: client.ApiClient) -> None:
    """Close the client and collect its dropped sockets (see UNCLOSED_CLIENT_SOCKET) while tolerated."""
    api.close()
    with warnings.catch_warnings():
        # the client's dropped sockets, TLS ones (the server's default) as plain ones
        warnings.filterwarnings(
            "ignore", r"unclosed <(socket\.socket|ssl\.SSLSocket)", ResourceWarning
        )
        gc.collect()


@pytest.fixture(scope="module")
def dyn(api_client: tuple[client.ApiClient, Any]) -> Any:
    return api_client[1]


@pytest.fixture(scope="module")
def core(api_client: tuple[client.ApiClient, Any]) -> client.CoreV1Api:
    return client.CoreV1Api(api_client[0])


@pytest.fixture(scope="module")
def crontabs(dyn: Any) -> Resource:
    resource: Resource = dyn.resources.get(api_version=GROUP_VERSION, kind="CronTab")
    return resource


def status_body(error: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(error.body)
    assert body["kind"] == "Status" and body["status"] == "Failure"
    return body


# --- discovery -------------------------------------------------------------------------------------------


def test_discovery_resolves_crontab_with_its_subresources(dyn: Any, crontabs: Resource) -> None:
    assert (crontabs.group_version, crontabs.name, crontabs.kind) == (
        GROUP_VERSION,
        "crontabs",
        "CronTab",
    )
    assert crontabs.namespaced is True
    assert crontabs.short_names == ["ct"]
    assert set(crontabs.verbs) >= {"create", "get", "list", "watch", "patch", "update", "delete"}
    assert set(crontabs.subresources) == {"status", "scale"}
    assert crontabs.subresources["scale"].kind == "Scale"
    beta = dyn.resources.get(api_version="stable.example.com/v1beta1", kind="CronTab")
    assert beta.name == "crontabs"
    assert dyn.resources.get(api_version="v1", kind="ConfigMap").name == "configmaps"
    cluster = dyn.resources.get(api_version="platform.example.com/v1alpha1", kind="ComputeCluster")
    assert cluster.namespaced is False
    assert dyn.version["kubernetes"]["major"] == "1"


# --- CRUD ------------------------------------------------------------------------------------------------


def test_create_get_list_patch_replace_delete(crontabs: Resource) -> None:
    response = crontabs.create(body=crontab("py-crud"), namespace=NAMESPACE, serialize=False)
    assert response.status == 201
    created = crontabs.get(name="py-crud", namespace=NAMESPACE)
    assert created.metadata.uid and created.metadata.resourceVersion.isdigit()
    assert created.metadata.generation == 1
    assert created.spec.image == "my-cron-image"

    with pytest.raises(ApiException) as exists:
        crontabs.create(body=crontab("py-crud"), namespace=NAMESPACE)
    assert exists.value.status == 409 and status_body(exists.value)["reason"] == "AlreadyExists"

    listed = crontabs.get(namespace=NAMESPACE)
    assert listed.kind == "CronTabList"
    assert "py-crud" in [item.metadata.name for item in listed.items]
    everywhere = crontabs.get()  # all namespaces: /apis/stable.example.com/v1/crontabs
    assert "py-crud" in [item.metadata.name for item in everywhere.items]

    patched = crontabs.patch(
        name="py-crud",
        namespace=NAMESPACE,
        body={"metadata": {"labels": {"tier": "py"}}, "spec": {"image": "patched"}},
        content_type=MERGE,
    )
    assert patched.spec.image == "patched" and patched.metadata.labels.tier == "py"
    assert patched.metadata.generation == 2
    selected = crontabs.get(namespace=NAMESPACE, label_selector="tier=py")
    assert [item.metadata.name for item in selected.items] == ["py-crud"]

    # patch() defaults to strategic merge patch, which a compact-format kind takes as a built-in type does
    strategic = crontabs.patch(name="py-crud", namespace=NAMESPACE, body={"spec": {"replicas": 2}})
    assert strategic.spec.replicas == 2 and strategic.metadata.generation == 3

    body = strategic.to_dict()
    body["spec"]["replicas"] = 4
    replaced = crontabs.replace(body=body, namespace=NAMESPACE)
    assert replaced.spec.replicas == 4 and replaced.metadata.generation == 4
    with pytest.raises(ApiException) as stale:
        crontabs.replace(
            body=body, namespace=NAMESPACE
        )  # body still carries the old resourceVersion
    assert stale.value.status == 409 and status_body(stale.value)["reason"] == "Conflict"

    deleted = crontabs.delete(name="py-crud", namespace=NAMESPACE)
    assert deleted.metadata.name == "py-crud"  # a custom resource's DELETE answers with the object
    with pytest.raises(ApiException) as missing:
        crontabs.get(name="py-crud", namespace=NAMESPACE)
    assert missing.value.status == 404
    assert (
        status_body(missing.value)["message"] == 'crontabs.stable.example.com "py-crud" not found'
    )


def test_v1beta1_view_of_the_same_object(dyn: Any, crontabs: Resource) -> None:
    crontabs.create(body=crontab("py-beta", replicas=2), namespace=NAMESPACE)
    beta = dyn.resources.get(api_version="stable.example.com/v1beta1", kind="CronTab")
    seen = beta.get(name="py-beta", namespace=NAMESPACE)
    assert seen.apiVersion == "stable.example.com/v1beta1"
    assert seen.spec.schedule == "* * * * */5" and seen.spec.replicas == 2
    crontabs.delete(name="py-beta", namespace=NAMESPACE)


# --- watch -----------------------------------------------------------------------------------------------


def test_watch_replays_changes_after_a_resource_version(dyn: Any, crontabs: Resource) -> None:
    start = crontabs.get(namespace=NAMESPACE).metadata.resourceVersion
    crontabs.create(body=crontab("py-watch"), namespace=NAMESPACE)
    crontabs.patch(
        name="py-watch", namespace=NAMESPACE, body={"spec": {"image": "v2"}}, content_type=MERGE
    )
    last = crontabs.delete(name="py-watch", namespace=NAMESPACE)

    seen: list[tuple[str, str, str | None]] = []
    watcher = watch.Watch()
    for event in dyn.watch(
        crontabs, namespace=NAMESPACE, resource_version=start, timeout=5, watcher=watcher
    ):
        obj = event["object"]
        seen.append((event["type"], obj.metadata.name, obj.spec.image))
        if event["type"] == "DELETED":
            assert obj.metadata.resourceVersion == last.metadata.resourceVersion
            watcher.stop()
    assert seen == [
        ("ADDED", "py-watch", "my-cron-image"),
        ("MODIFIED", "py-watch", "v2"),
        ("DELETED", "py-watch", "v2"),
    ]


def test_watch_stream_sees_a_live_change_and_ends_at_the_timeout(
    api_client: tuple[client.ApiClient, Any], crontabs: Resource
) -> None:
    custom = client.CustomObjectsApi(api_client[0])
    crontabs.create(body=crontab("py-live"), namespace=NAMESPACE)
    start = crontabs.get(namespace=NAMESPACE).metadata.resourceVersion

    def change_later() -> None:
        time.sleep(0.5)
        crontabs.patch(
            name="py-live", namespace=NAMESPACE, body={"spec": {"replicas": 7}}, content_type=MERGE
        )

    writer = threading.Thread(target=change_later)
    writer.start()
    watcher = watch.Watch()
    events: list[dict[str, Any]] = []
    began = time.monotonic()
    for event in watcher.stream(
        custom.list_namespaced_custom_object,
        "stable.example.com",
        "v1",
        NAMESPACE,
        "crontabs",
        resource_version=start,
        timeout_seconds=10,
    ):
        events.append(event)
        watcher.stop()
    writer.join()
    assert [(e["type"], e["object"]["spec"]["replicas"]) for e in events] == [("MODIFIED", 7)]
    assert time.monotonic() - began < 9  # the event came live, not at the end of the stream

    # nothing more happens: the server ends the stream at timeoutSeconds and the loop returns
    began = time.monotonic()
    quiet = list(
        watch.Watch().stream(
            custom.list_namespaced_custom_object,
            "stable.example.com",
            "v1",
            NAMESPACE,
            "crontabs",
            resource_version=events[0]["object"]["metadata"]["resourceVersion"],
            timeout_seconds=1,
        )
    )
    assert quiet == [] and time.monotonic() - began < 5
    crontabs.delete(name="py-live", namespace=NAMESPACE)


def test_watch_from_a_compacted_resource_version_raises_410(tmp_path: Path) -> None:
    compacting = ServerProcess(
        tmp_path / "data", free_port(), extra_args=("--etcd-compaction-interval", "0.2")
    )
    compacting.start()
    api, dyn_410 = new_dynamic_client(compacting.kubeconfig, tmp_path)
    try:
        resource = dyn_410.resources.get(api_version=GROUP_VERSION, kind="CronTab")
        old = resource.create(body=crontab("py-410"), namespace=NAMESPACE).metadata.resourceVersion
        for replicas in range(2, 5):
            resource.patch(
                name="py-410",
                namespace=NAMESPACE,
                body={"spec": {"replicas": replicas}},
                content_type=MERGE,
            )
        with compacting.client(timeout=10) as http:
            path = f"/apis/{GROUP_VERSION}/namespaces/{NAMESPACE}/crontabs"
            wait_compacted(http, path, old)
        with pytest.raises(ApiException) as expired:
            for _ in dyn_410.watch(resource, namespace=NAMESPACE, resource_version=old, timeout=5):
                pass
        assert expired.value.status == 410
        assert f"too old resource version: {old}" in str(expired.value.reason)

        # what the caller must do then: relist, and watch from the list's resourceVersion
        relisted = resource.get(namespace=NAMESPACE)
        assert [item.spec.replicas for item in relisted.items] == [4]
        resumed = list(
            dyn_410.watch(
                resource,
                namespace=NAMESPACE,
                resource_version=relisted.metadata.resourceVersion,
                timeout=1,
            )
        )
        assert resumed == []
    finally:
        api.close()
        compacting.stop()


# --- subresources ----------------------------------------------------------------------------------------


def test_scale_subresource(crontabs: Resource) -> None:
    crontabs.create(body=crontab("py-scale", replicas=2), namespace=NAMESPACE)
    scale = crontabs.subresources["scale"]
    current = scale.get(name="py-scale", namespace=NAMESPACE)
    assert (current.apiVersion, current.kind) == ("autoscaling/v1", "Scale")
    assert current.metadata.name == "py-scale" and current.spec.replicas == 2

    patched = scale.patch(
        name="py-scale", namespace=NAMESPACE, body={"spec": {"replicas": 5}}, content_type=MERGE
    )
    assert patched.spec.replicas == 5
    assert crontabs.get(name="py-scale", namespace=NAMESPACE).spec.replicas == 5

    body = patched.to_dict()
    body["spec"]["replicas"] = 3
    replaced = scale.replace(body=body, name="py-scale", namespace=NAMESPACE)
    assert replaced.spec.replicas == 3
    stored = crontabs.get(name="py-scale", namespace=NAMESPACE)
    assert stored.spec.replicas == 3 and stored.spec.image == "my-cron-image"
    crontabs.delete(name="py-scale", namespace=NAMESPACE)


def test_status_subresource(crontabs: Resource) -> None:
    created = crontabs.create(body=crontab("py-status"), namespace=NAMESPACE)
    status = crontabs.subresources["status"]
    patched = status.patch(
        name="py-status",
        namespace=NAMESPACE,
        body={"status": {"replicas": 1, "labelSelector": "app=py"}, "spec": {"image": "ignored"}},
        content_type=MERGE,
    )
    assert patched.status.replicas == 1 and patched.status.labelSelector == "app=py"
    assert patched.spec.image == "my-cron-image"  # only status is taken from a /status write
    assert patched.metadata.generation == created.metadata.generation
    scale = crontabs.subresources["scale"].get(name="py-status", namespace=NAMESPACE)
    assert scale.status.replicas == 1 and scale.status.selector == "app=py"

    # and the main resource ignores status changes
    body = patched.to_dict()
    body["status"]["replicas"] = 9
    replaced = crontabs.replace(body=body, namespace=NAMESPACE)
    assert replaced.status.replicas == 1
    crontabs.delete(name="py-status", namespace=NAMESPACE)


# --- server-side apply -----------------------------------------------------------------------------------


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["manager"]: entry for entry in obj["metadata"].get("managedFields") or []}


def test_server_side_apply(crontabs: Resource) -> None:
    manifest = crontab("py-ssa", replicas=2)
    response = crontabs.server_side_apply(
        body=manifest, namespace=NAMESPACE, field_manager="py-ssa-a", serialize=False
    )
    assert response.status == 201
    created = json.loads(response.data)
    entry = managers(created)["py-ssa-a"]
    assert (entry["operation"], entry["apiVersion"], entry["fieldsType"]) == (
        "Apply",
        GROUP_VERSION,
        "FieldsV1",
    )
    assert {"f:cronSpec", "f:image", "f:replicas"} <= set(entry["fieldsV1"]["f:spec"])

    # the same manager changes a value: 200
    manifest["spec"]["image"] = "image-a2"
    response = crontabs.server_side_apply(
        body=manifest, namespace=NAMESPACE, field_manager="py-ssa-a", serialize=False
    )
    assert response.status == 200
    assert json.loads(response.data)["spec"]["image"] == "image-a2"

    # another manager changing a field py-ssa-a owns, without force: 409 with the conflicting field
    other = crontab("py-ssa", replicas=2, image="image-b")
    del other["spec"]["cronSpec"], other["spec"]["replicas"]
    with pytest.raises(ApiException) as conflict:
        crontabs.server_side_apply(body=other, namespace=NAMESPACE, field_manager="py-ssa-b")
    assert conflict.value.status == 409
    status = status_body(conflict.value)
    assert status["reason"] == "Conflict"
    assert 'conflict with "py-ssa-a"' in status["message"]
    causes = status["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [("FieldManagerConflict", ".spec.image")]

    # with force, py-ssa-b takes the field over
    forced = crontabs.server_side_apply(
        body=other, namespace=NAMESPACE, field_manager="py-ssa-b", force_conflicts=True
    ).to_dict()
    assert forced["spec"]["image"] == "image-b"
    owners = managers(forced)
    assert "f:image" in owners["py-ssa-b"]["fieldsV1"]["f:spec"]
    assert "f:image" not in owners["py-ssa-a"]["fieldsV1"]["f:spec"]

    # a field py-ssa-a applied before and leaves out now, owned by nobody else, is removed
    del manifest["spec"]["replicas"], manifest["spec"]["image"]
    shrunk = crontabs.server_side_apply(
        body=manifest, namespace=NAMESPACE, field_manager="py-ssa-a"
    ).to_dict()
    assert shrunk["spec"] == {"cronSpec": "* * * * */5", "image": "image-b"}
    crontabs.delete(name="py-ssa", namespace=NAMESPACE)


# --- typed CoreV1Api -------------------------------------------------------------------------------------


def test_typed_configmaps(core: client.CoreV1Api) -> None:
    # typed POSTs and PUTs carry no Content-Type header; the body is JSON all the same
    created = core.create_namespaced_config_map(
        NAMESPACE,
        client.V1ConfigMap(
            api_version="v1",
            kind="ConfigMap",
            metadata=client.V1ObjectMeta(name="py-cm", labels={"app": "py"}),
            data={"a": "1"},
        ),
    )
    assert created.metadata.uid and created.data == {"a": "1"}
    assert core.read_namespaced_config_map("py-cm", NAMESPACE).data == {"a": "1"}
    listed = core.list_namespaced_config_map(NAMESPACE, label_selector="app=py")
    assert [item.metadata.name for item in listed.items] == ["py-cm"]

    patched = core.patch_namespaced_config_map(
        "py-cm", NAMESPACE, {"data": {"b": "2"}}
    )  # strategic
    assert patched.data == {"a": "1", "b": "2"}
    patched.data["c"] = "3"
    replaced = core.replace_namespaced_config_map("py-cm", NAMESPACE, patched)
    assert replaced.data == {"a": "1", "b": "2", "c": "3"}

    stream = watch.Watch().stream(
        core.list_namespaced_config_map,
        NAMESPACE,
        field_selector="metadata.name=py-cm",
        resource_version=created.metadata.resource_version,
        timeout_seconds=5,
    )
    updates = []
    for event in stream:
        updates.append((event["type"], event["object"].data))
        if len(updates) == 2:
            break
    assert updates == [("MODIFIED", {"a": "1", "b": "2"}), ("MODIFIED", patched.data)]

    core.delete_namespaced_config_map("py-cm", NAMESPACE)
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("py-cm", NAMESPACE)
    assert missing.value.status == 404
    assert status_body(missing.value)["message"] == 'configmaps "py-cm" not found'


def test_typed_events(core: client.CoreV1Api) -> None:
    involved = client.V1ObjectReference(
        api_version=GROUP_VERSION, kind="CronTab", name="py-evented", namespace=NAMESPACE
    )
    created = core.create_namespaced_event(
        NAMESPACE,
        client.CoreV1Event(
            api_version="v1",
            kind="Event",
            metadata=client.V1ObjectMeta(generate_name="py-event-"),
            involved_object=involved,
            reason="Tested",
            message="an event from the typed client",
            type="Normal",
        ),
    )
    assert created.metadata.name.startswith("py-event-")
    found = core.list_namespaced_event(NAMESPACE, field_selector="involvedObject.name=py-evented")
    assert [(e.reason, e.message) for e in found.items] == [
        ("Tested", "an event from the typed client")
    ]
    assert core.list_namespaced_event(NAMESPACE, field_selector="involvedObject.name=x").items == []


def test_typed_create_without_type_meta(core: client.CoreV1Api) -> None:
    # the generated models leave apiVersion/kind unset unless given, as most examples do
    created = core.create_namespaced_config_map(
        NAMESPACE, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-bare"), data={"x": "y"})
    )
    assert created.kind == "ConfigMap" and created.data == {"x": "y"}
    event = core.create_namespaced_event(
        NAMESPACE,
        client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name="py-bare-"),
            involved_object=client.V1ObjectReference(kind="ConfigMap", name="py-bare"),
            reason="Bare",
            message="no type meta",
        ),
    )
    assert event.kind == "Event"


def test_typed_delete_answers_a_status(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map(
        NAMESPACE,
        client.V1ConfigMap(
            api_version="v1", kind="ConfigMap", metadata=client.V1ObjectMeta(name="py-del")
        ),
    )
    # kubernetes 37 declares this response as a plain "object": it arrives as the JSON dict
    answer = core.delete_namespaced_config_map("py-del", NAMESPACE)
    assert (answer["kind"], answer["status"]) == ("Status", "Success")
    assert answer["details"] == {
        "name": "py-del",
        "kind": "configmaps",
        "uid": created.metadata.uid,
    }
