"""Services as kube's pkg/registry/core/service allocates and validates them: cluster IPs from
--service-cluster-ip-range (10.0.0.0/24 by default) and node ports from --service-node-port-range (30000-32767),
with the ipallocator's and portallocator's errors wrapped as alloc.go wraps them, given back on delete, on a
type change and when the write fails; kube's SetDefaults_Service. Through the real app over memory storage."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from apiserver.storage.memory import MemoryStorage
from builtin.core.allocator import AlreadyAllocatedError, Holder, RangeAllocator, RangeFullError
from tests.inprocess import InProcessServer

SERVICES = "/api/v1/namespaces/default/services"
MERGE = {"content-type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as http:
        yield http


def service(name: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("ports", [{"port": 80}])
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def create(client: httpx.Client, name: str, **spec: Any) -> httpx.Response:
    return client.post(SERVICES, json=service(name, **spec))


def refused(response: httpx.Response, name: str, field: str, detail: str) -> None:
    body = response.json()
    assert (response.status_code, body["reason"]) == (422, "Invalid"), response.text
    assert body["message"] == f'Service "{name}" is invalid: {field}: {detail}'
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [(field, detail)]


def test_a_service_gets_a_cluster_ip_of_the_range_and_kubes_defaults(client: httpx.Client) -> None:
    spec = create(
        client,
        "plain",
        ports=[{"port": 80}, {"port": 53, "protocol": "UDP", "name": "dns", "targetPort": "dns"}],
    )
    refused(spec, "plain", "spec.ports[0].name", "Required value")  # two ports: each named
    created = create(client, "plain")
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.0.0.0/24")
    assert spec["clusterIP"] not in ("10.0.0.0", "10.0.0.255", "10.0.0.1")
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert (spec["type"], spec["sessionAffinity"], spec["internalTrafficPolicy"]) == (
        "ClusterIP",
        "None",
        "Cluster",
    )
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert "externalTrafficPolicy" not in spec and "generation" not in created.json()["metadata"]


def test_a_requested_cluster_ip_is_taken_once(client: httpx.Client) -> None:
    assert create(client, "first", clusterIP="10.0.0.40").json()["spec"]["clusterIPs"] == [
        "10.0.0.40"
    ]
    refused(
        create(client, "second", clusterIP="10.0.0.40"),
        "second",
        "spec.clusterIPs",
        'Invalid value: ["10.0.0.40"]: failed to allocate IP 10.0.0.40: provided IP is already allocated',
    )


@pytest.mark.parametrize("ip", ["10.0.1.5", "10.0.0.0", "10.0.0.255", "192.168.0.1"])
def test_a_cluster_ip_outside_the_range_is_refused(client: httpx.Client, ip: str) -> None:
    refused(
        create(client, "outside", clusterIP=ip),
        "outside",
        "spec.clusterIPs",
        f'Invalid value: ["{ip}"]: failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid'
        " range. The range of valid IPs is 10.0.0.0/24",
    )


def test_a_cluster_ip_that_is_no_ip_is_refused(client: httpx.Client) -> None:
    refused(
        create(client, "garbled", clusterIP="10.0.0.300"),
        "garbled",
        "spec.clusterIPs[0]",
        'Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    )


def test_node_ports_are_allocated_in_range_and_taken_once(client: httpx.Client) -> None:
    created = create(
        client,
        "np",
        type="NodePort",
        ports=[{"port": 80, "name": "a"}, {"port": 81, "name": "b", "nodePort": 30123}],
    )
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assigned = spec["ports"][0]["nodePort"]
    assert 30000 <= assigned <= 32767 and spec["ports"][1]["nodePort"] == 30123
    assert spec["externalTrafficPolicy"] == "Cluster"
    refused(
        create(client, "np2", type="NodePort", ports=[{"port": 80, "nodePort": 30123}]),
        "np2",
        "spec.ports[0].nodePort",
        "Invalid value: 30123: provided port is already allocated",
    )
    refused(
        create(client, "np3", type="LoadBalancer", ports=[{"port": 80, "nodePort": 80}]),
        "np3",
        "spec.ports[0].nodePort",
        "Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767",
    )
    refused(
        create(client, "np4", ports=[{"port": 80, "nodePort": 30999}]),
        "np4",
        "spec.ports[0].nodePort",
        "Forbidden: may not be used when `type` is 'ClusterIP'",
    )


def test_delete_gives_the_ip_and_ports_back(client: httpx.Client) -> None:
    spec = {
        "clusterIP": "10.0.0.41",
        "type": "NodePort",
        "ports": [{"port": 80, "nodePort": 30201}],
    }
    assert create(client, "held", **spec).status_code == 201
    assert create(client, "waiting", **spec).status_code == 422
    assert client.delete(f"{SERVICES}/held").status_code == 200
    again = create(client, "waiting", **spec)
    assert again.status_code == 201, again.text


def test_a_failed_create_and_a_dry_run_hold_nothing(client: httpx.Client) -> None:
    # the IP is taken before validation (kube's BeginCreate), given back when validation refuses the Service
    broken = create(client, "broken", clusterIP="10.0.0.42", ports=[])
    refused(broken, "broken", "spec.ports", "Required value")
    dry = client.post(
        SERVICES, params={"dryRun": "All"}, json=service("dry", clusterIP="10.0.0.42")
    )
    assert dry.status_code == 201 and dry.json()["spec"]["clusterIP"] == "10.0.0.42"
    assert create(client, "after", clusterIP="10.0.0.42").status_code == 201


def test_updates_keep_allocations_and_release_what_a_type_change_drops(
    client: httpx.Client,
) -> None:
    made = create(
        client, "morph", type="NodePort", ports=[{"port": 80, "name": "web", "nodePort": 30301}]
    ).json()
    ip = made["spec"]["clusterIP"]
    # a PUT of the manifest without clusterIP and nodePort keeps both (kube's patchAllocatedValues)
    replaced = client.put(
        f"{SERVICES}/morph",
        json={
            **service("morph", type="NodePort", ports=[{"port": 80, "name": "web"}]),
            "metadata": made["metadata"],
        },
    )
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["spec"]["clusterIP"] == ip
    assert replaced.json()["spec"]["ports"][0]["nodePort"] == 30301
    other = "10.0.0.43" if ip != "10.0.0.43" else "10.0.0.44"  # the allocation is random
    refused(
        client.patch(
            f"{SERVICES}/morph",
            json={"spec": {"clusterIP": other, "clusterIPs": [other]}},
            headers=MERGE,
        ),
        "morph",
        "spec.clusterIPs[0]",
        f'Invalid value: ["{other}"]: may not change once set',
    )
    to_cluster_ip = client.patch(
        f"{SERVICES}/morph", json={"spec": {"type": "ClusterIP"}}, headers=MERGE
    )
    assert to_cluster_ip.status_code == 200, to_cluster_ip.text
    assert "nodePort" not in to_cluster_ip.json()["spec"]["ports"][0]
    assert "externalTrafficPolicy" not in to_cluster_ip.json()["spec"]
    assert (
        create(
            client, "reuse-port", type="NodePort", ports=[{"port": 80, "nodePort": 30301}]
        ).status_code
        == 201
    )
    external = client.patch(
        f"{SERVICES}/morph",
        json={"spec": {"type": "ExternalName", "externalName": "example.com"}},
        headers=MERGE,
    )
    assert external.status_code == 200, external.text
    assert "clusterIP" not in external.json()["spec"]
    assert create(client, "reuse-ip", clusterIP=ip).status_code == 201


def test_headless_and_external_name_services_hold_no_ip(client: httpx.Client) -> None:
    headless = create(client, "headless", clusterIP="None", selector={"app": "x"}).json()["spec"]
    assert (headless["clusterIPs"], headless["ipFamilyPolicy"], headless["ipFamilies"]) == (
        ["None"],
        "SingleStack",
        ["IPv4"],
    )
    selectorless = create(client, "headless-all", clusterIP="None", ports=[]).json()["spec"]
    assert (selectorless["ipFamilyPolicy"], selectorless["ipFamilies"]) == (
        "RequireDualStack",
        ["IPv4", "IPv6"],
    )
    external = create(
        client, "ext", type="ExternalName", externalName="example.com", ports=[]
    ).json()["spec"]
    assert "clusterIP" not in external and "ipFamilies" not in external
    refused(
        create(client, "ext2", type="ExternalName", ports=[]),
        "ext2",
        "spec.externalName",
        "Required value",
    )
    refused(create(client, "portless", ports=[]), "portless", "spec.ports", "Required value")
    refused(
        create(
            client,
            "ext3",
            type="ExternalName",
            externalName="a.example",
            clusterIP="10.0.0.44",
            ports=[],
        ),
        "ext3",
        "spec.clusterIPs",
        "Forbidden: may not be set for ExternalName services",
    )
    refused(
        create(client, "mismatch", clusterIP="10.0.0.45", clusterIPs=["10.0.0.46"]),
        "mismatch",
        "spec.clusterIPs",
        'Invalid value: ["10.0.0.46"]: first value must match `clusterIP`',
    )


def test_the_kubernetes_service_is_kubes(client: httpx.Client) -> None:
    response = client.get(f"{SERVICES}/kubernetes")
    assert response.status_code == 200
    body = response.json()
    assert body["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert body["spec"]["clusterIP"] == "10.0.0.1"
    assert body["spec"]["ports"] == [
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}
    ]


def test_the_allocator_hands_each_value_out_once_under_races() -> None:
    async def scenario() -> None:
        storage = MemoryStorage()
        await storage.start()
        allocator = RangeAllocator(storage, "/registry/ranges/test/", 8, str, static_band=2)
        holders = [Holder("ns", f"s{i}", f"uid-{i}") for i in range(8)]
        got = await asyncio.gather(*(allocator.allocate_next(h, False) for h in holders))
        assert sorted(got) == list(range(8))
        with pytest.raises(RangeFullError):
            await allocator.allocate_next(Holder("ns", "late", "uid-late"), False)
        with pytest.raises(AlreadyAllocatedError):
            await allocator.allocate(got[0], Holder("ns", "late", "uid-late"), False)
        await allocator.release(got[0], Holder("ns", "s0", "another-uid"))  # not its holder: kept
        assert await storage.get(allocator.key(got[0])) is not None
        await allocator.release(got[0], holders[0])
        assert await storage.get(allocator.key(got[0])) is None
        await storage.close()

    asyncio.run(scenario())
