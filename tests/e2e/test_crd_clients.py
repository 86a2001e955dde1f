"""The Python clients against CustomResourceDefinitions installed at run time: the official `kubernetes` client installs every conformance CRD through ApiextensionsV1Api and reads
its conditions, its DynamicClient (whose discovery was cached before the install) finds each new kind and
creates, gets, lists, patches, watches and deletes the sample resources; lightkube builds generic resources
from the listed CRDs and loads the samples from YAML; kr8s finds the kinds by plural and by a class of its own.
kubectl's side of the same point is tests/e2e/test_crd_runtime.py, whose CRD and sample lists this reuses."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import kr8s
import kr8s.asyncio
import pytest
import yaml
from kr8s.asyncio.objects import new_class
from kubernetes import client, config, dynamic, watch
from kubernetes.dynamic.resource import Resource
from lightkube import Client, KubeConfig, codecs
from lightkube.core.resource import NamespacedResource
from lightkube.generic_resource import get_generic_resource, load_in_cluster_generic_resources

from tests.e2e.test_crd_runtime import (
    CRD_FILES,
    CRDS,
    SAMPLE_FILES,
    SAMPLE_NAMESPACES,
    SAMPLES,
    basic_crd,
    load,
    renamed,
)
from tests.e2e.test_python_client import UNCLOSED_CLIENT_SOCKET, close_api_client
from tests.serverproc import ServerProcess

pytestmark = [pytest.mark.timeout(90), pytest.mark.filterwarnings(UNCLOSED_CLIENT_SOCKET)]

MERGE = "application/merge-patch+json"
# the k8s-docs CronTab, renamed out of the group the generated project serves (see test_crd_runtime)
CRONTAB_CRD = CRDS / "k8s-docs-crontab" / "crontab-basic.yaml"
CRONTAB_SAMPLE = SAMPLES / "k8s-docs-crontab" / "my-crontab.yaml"


def samples() -> list[dict[str, Any]]:
    """Every sample resource, in file order (the kubebuilder v1 and v2 CronJob share one name)."""
    documents = [
        document
        for sample in SAMPLE_FILES
        for document in yaml.safe_load_all((SAMPLES / sample).read_text())
        if document
    ]
    return [*documents, yaml.safe_load(renamed(CRONTAB_SAMPLE.read_text()))]


@pytest.fixture(scope="module")
def api_client(server: ServerProcess) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield api
    close_api_client(api)


@pytest.fixture(scope="module")
def dyn(api_client: client.ApiClient, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A DynamicClient whose discovery is cached before any CRD exists: finding the new kinds afterwards
    depends on the client refreshing its cache when a kind is missing, and the server serving it by then."""
    cache = tmp_path_factory.mktemp("discovery") / "discovery.json"
    dynamic_client = dynamic.DynamicClient(api_client, cache_file=str(cache))
    with pytest.raises(dynamic.exceptions.ResourceNotFoundError):
        dynamic_client.resources.get(api_version="cert-manager.io/v1", kind="Issuer")
    return dynamic_client


def established(extensions: client.ApiextensionsV1Api, name: str, timeout: float = 5.0) -> Any:
    """The CRD once its Established condition is True (polled every 20 ms)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        crd = extensions.read_custom_resource_definition(name)
        conditions = {c.type: c.status for c in (crd.status.conditions or [])}
        if conditions.get("Established") == "True":
            return crd
        time.sleep(0.02)
    raise AssertionError(f"{name} is not Established within {timeout} s")


@pytest.fixture(scope="module")
def installed(dyn: Any, api_client: client.ApiClient) -> dict[str, Any]:
    """Every conformance CRD created (or, for the multi-version CronJob, replaced) through the typed
    ApiextensionsV1Api, each Established; the CRDs as read back, by name."""
    extensions = client.ApiextensionsV1Api(api_client)
    crds: dict[str, Any] = {}
    for path in [*(CRDS / name for name in CRD_FILES), CRONTAB_CRD]:
        body = load(path)
        name = body["metadata"]["name"]
        if name in crds:
            body["metadata"]["resourceVersion"] = crds[name].metadata.resource_version
            extensions.replace_custom_resource_definition(name, body)
        else:
            extensions.create_custom_resource_definition(body)
        crds[name] = established(extensions, name)
    core = client.CoreV1Api(api_client)
    for namespace in SAMPLE_NAMESPACES:
        core.create_namespace({"metadata": {"name": namespace}})
    return crds


def test_apiextensions_client_reads_each_crd_and_its_conditions(
    installed: dict[str, Any],
) -> None:
    assert len(installed) == 13  # 13 files and the CronTab, the kubebuilder CronJob twice
    for name, crd in installed.items():
        conditions = {c.type: c for c in crd.status.conditions}
        assert conditions["NamesAccepted"].reason == "NoConflicts", name
        assert conditions["Established"].status == "True", name
        assert conditions["Established"].last_transition_time is not None, name
        assert crd.status.accepted_names.kind == crd.spec.names.kind, name
        storage = next(v.name for v in crd.spec.versions if v.storage)
        assert crd.status.stored_versions == [storage], name
    multi = installed["cronjobs.batch.tutorial.kubebuilder.io"]
    assert [v.name for v in multi.spec.versions] == ["v1", "v2"]


def test_the_create_answer_has_kubes_initial_status(
    api_client: client.ApiClient, installed: dict[str, Any]
) -> None:
    """kube's CRD PrepareForCreate: the answer's status holds storedVersions and empty acceptedNames
    before any controller ran (it had no status at all, which the typed client's readers trip over)."""
    extensions = client.ApiextensionsV1Api(api_client)
    body = basic_crd("answers", "Answer")
    created = extensions.create_custom_resource_definition(body)
    assert created.status.stored_versions == ["v1"]
    assert (created.status.accepted_names.plural, created.status.accepted_names.kind) == ("", "")
    assert created.status.conditions is None
    extensions.delete_custom_resource_definition(body["metadata"]["name"])


def test_dynamic_client_discovers_every_served_version(dyn: Any, installed: dict[str, Any]) -> None:
    for crd in installed.values():
        for version in (v.name for v in crd.spec.versions if v.served):
            resource = dyn.resources.get(
                api_version=f"{crd.spec.group}/{version}", kind=crd.spec.names.kind
            )
            assert resource.name == crd.spec.names.plural
            assert resource.namespaced is (crd.spec.scope == "Namespaced")
            assert set(resource.verbs) >= {"create", "get", "list", "watch", "patch", "delete"}


def test_dynamic_client_creates_gets_lists_patches_and_deletes_each_sample(
    dyn: Any, installed: dict[str, Any]
) -> None:
    for sample in samples():
        resource: Resource = dyn.resources.get(
            api_version=sample["apiVersion"], kind=sample["kind"]
        )
        name = sample["metadata"]["name"]
        namespace = sample["metadata"].get("namespace", "default") if resource.namespaced else None
        label = f"{sample['kind']}/{name}"
        response = resource.create(body=sample, namespace=namespace, serialize=False)
        assert response.status == 201, label
        got = resource.get(name=name, namespace=namespace)
        assert (got.apiVersion, got.metadata.uid is not None) == (sample["apiVersion"], True)
        listed = resource.get(namespace=namespace)
        assert listed.kind == f"{sample['kind']}List", label
        assert name in [item.metadata.name for item in listed.items], label
        patched = resource.patch(
            name=name,
            namespace=namespace,
            body={"metadata": {"labels": {"client": "python"}}},
            content_type=MERGE,
        )
        assert patched.metadata.labels.client == "python", label
        selected = resource.get(namespace=namespace, label_selector="client=python")
        assert [item.metadata.name for item in selected.items] == [name], label
        resource.delete(name=name, namespace=namespace)
        assert name not in [item.metadata.name for item in resource.get(namespace=namespace).items]


def test_dynamic_client_watch_sees_a_new_object(dyn: Any, installed: dict[str, Any]) -> None:
    issuers: Resource = dyn.resources.get(api_version="cert-manager.io/v1", kind="Issuer")
    start = issuers.get(namespace="default").metadata.resourceVersion
    body = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {"name": "watched"},
        "spec": {"selfSigned": {}},
    }
    creator = threading.Timer(0.2, lambda: issuers.create(body=body, namespace="default"))
    creator.start()
    watcher = watch.Watch()
    seen: list[tuple[str, str]] = []
    for event in dyn.watch(
        issuers, namespace="default", resource_version=start, timeout=10, watcher=watcher
    ):
        seen.append((event["type"], event["object"].metadata.name))
        watcher.stop()
    creator.join()
    assert seen == [("ADDED", "watched")]
    issuers.delete(name="watched", namespace="default")


@pytest.fixture(scope="module")
def lk(server: ServerProcess, installed: dict[str, Any]) -> Iterator[Client]:
    lightkube = Client(config=KubeConfig.from_file(server.kubeconfig), field_manager="lk-crd")
    yield lightkube
    lightkube.close()


def test_lightkube_loads_generic_resources_from_the_installed_crds(lk: Client) -> None:
    load_in_cluster_generic_resources(lk)
    gateway = get_generic_resource("gateway.networking.k8s.io/v1", "Gateway")
    assert gateway is not None and gateway._api_info.plural == "gateways"
    for sample in SAMPLE_FILES[:3]:
        objects = codecs.load_all_yaml((SAMPLES / sample).read_text())
        for obj in objects:
            created = lk.create(obj)
            assert created.metadata.uid, (obj.kind, obj.metadata.name)
            namespace = obj.metadata.namespace or "default"
            kind = type(obj)
            if issubclass(kind, NamespacedResource):
                got = lk.get(kind, obj.metadata.name, namespace=namespace)
                listed = [o.metadata.name for o in lk.list(kind, namespace=namespace)]
            else:
                got = lk.get(kind, obj.metadata.name)
                listed = [o.metadata.name for o in lk.list(kind)]
            assert got.metadata.uid == created.metadata.uid
            assert obj.metadata.name in listed
        for obj in objects:
            scoped = issubclass(type(obj), NamespacedResource)
            namespace = (obj.metadata.namespace or "default") if scoped else None
            lk.delete(type(obj), obj.metadata.name, namespace=namespace)


def test_kr8s_finds_runtime_kinds_by_plural_and_by_class(
    server: ServerProcess, installed: dict[str, Any]
) -> None:
    asyncio.run(kr8s_lifecycle(server))
    # a transport of kr8s's session can outlive the closed loop (the client library's socket, as
    # UNCLOSED_CLIENT_SOCKET says): collected here while tolerated, or it fails whatever test the collector
    # next runs in (seen at this test's teardown on 2 workers)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "unclosed transport", ResourceWarning)
        gc.collect()


async def kr8s_lifecycle(server: ServerProcess) -> None:
    """kr8s's async API (its sync one runs this on a loop thread of its own, whose connection it never
    closes: the server's graceful shutdown then waits its 5 s for it); the session closed at the end."""
    api = await kr8s.asyncio.api(kubeconfig=str(server.kubeconfig))
    try:
        kinds = {(r["name"], r["version"]) for r in await api.api_resources()}
        assert ("servicemonitors", "monitoring.coreos.com/v1") in kinds
        service_monitor = new_class(
            kind="ServiceMonitor", version="monitoring.coreos.com/v1", namespaced=True
        )
        sample = yaml.safe_load(
            (SAMPLES / "prometheus-operator/vllm-service-monitor.yaml").read_text()
        )
        monitor = service_monitor(sample, api=api)
        await monitor.create()
        assert await monitor.exists()
        found = [obj.name async for obj in api.get("servicemonitors", namespace="monitoring")]
        assert found == [sample["metadata"]["name"]]
        await monitor.patch({"metadata": {"labels": {"client": "kr8s"}}})
        await monitor.refresh()
        assert monitor.labels["client"] == "kr8s"
        await monitor.delete()
        assert not await monitor.exists()
    finally:
        if api._session is not None:  # kr8s has no public close
            await api._session.aclose()
