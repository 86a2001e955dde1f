"""What a kubectl user sees of the core kinds' validation, against one real server started
with kube-apiserver's --service-cluster-ip-range and --service-node-port-range: kube's messages for immutable
ConfigMaps, typed Secrets and namespace names, the namespace name label, kube's field selectors, and Services
whose cluster IPs and node ports are allocated once, even across a restart of the server."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port

IP_RANGE, PORT_RANGE = "10.96.0.0/16", "31000-31999"
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    flags = ("--service-cluster-ip-range", IP_RANGE, "--service-node-port-range", PORT_RANGE)
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), extra_args=flags)
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    cache = tmp_path_factory.mktemp("kubectl-cache")
    return Kubectl(kubectl_binary(33), server.kubeconfig, cache, "default")


def refused(kubectl: Kubectl, *args: str, stdin: str | None = None) -> str:
    """kubectl's error output of a command the server refuses."""
    result = kubectl.run(*args, stdin=stdin, check=False)
    assert result.returncode != 0, result.stdout
    return result.stderr.strip()


def test_an_immutable_configmap_cannot_change(kubectl: Kubectl) -> None:
    kubectl.run("create", "configmap", "frozen", "--from-literal=a=1")
    kubectl.run("patch", "configmap", "frozen", "-p", '{"immutable": true}')
    error = refused(kubectl, "patch", "configmap", "frozen", "-p", '{"data": {"a": "2"}}')
    assert error == f'The ConfigMap "frozen" is invalid: data: {IMMUTABLE}'
    error = refused(kubectl, "patch", "configmap", "frozen", "-p", '{"immutable": false}')
    assert error == f'The ConfigMap "frozen" is invalid: immutable: {IMMUTABLE}'


def test_a_tls_secret_needs_its_keys_and_keeps_its_type(kubectl: Kubectl) -> None:
    manifest = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: half-tls\ntype: kubernetes.io/tls\n"
        "stringData:\n  tls.crt: cert\n"
    )
    error = refused(kubectl, "apply", "-f", "-", stdin=manifest)
    assert 'The Secret "half-tls" is invalid: data[tls.key]: Required value' in error
    kubectl.run("apply", "-f", "-", stdin=manifest + "  tls.key: key\n")
    error = refused(kubectl, "patch", "secret", "half-tls", "-p", '{"type": "Opaque"}')
    assert (
        error
        == 'The Secret "half-tls" is invalid: type: Invalid value: "Opaque": field is immutable'
    )


def test_namespace_names_and_their_label(kubectl: Kubectl) -> None:
    error = refused(kubectl, "create", "namespace", "a.b")
    assert error == (
        'The Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots'
    )
    kubectl.run("create", "namespace", "labelled")
    found = kubectl.run("get", "ns", "-l", "kubernetes.io/metadata.name=labelled", "-o", "name")
    assert found.stdout.split() == ["namespace/labelled"]
    generation = kubectl.run("get", "ns", "labelled", "-o", "jsonpath={.metadata.generation}")
    assert generation.stdout == ""  # kube's namespace strategy sets none


def test_field_selectors_of_the_core_kinds(kubectl: Kubectl) -> None:
    active = kubectl.run("get", "ns", "--field-selector", "status.phase=Active", "-o", "name")
    assert "namespace/default" in active.stdout.split()
    tls = kubectl.run("get", "secrets", "--field-selector", "type=kubernetes.io/tls", "-o", "name")
    assert tls.stdout.split() == ["secret/half-tls"]
    error = refused(kubectl, "get", "secrets", "--field-selector", "data=x")
    assert error.endswith(
        "field label not supported: data"
    )  # kubectl prefixes "Unable to find ..."


def wait_for_kubernetes_service(kubectl: Kubectl) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        got = kubectl.run(
            "get", "svc", "kubernetes", "-o", "jsonpath={.spec.clusterIP}", check=False
        )
        if got.returncode == 0:
            return got.stdout
        time.sleep(0.1)
    raise AssertionError("no kubernetes Service")


def test_services_get_addresses_and_ports_once(kubectl: Kubectl, server: ServerProcess) -> None:
    assert wait_for_kubernetes_service(kubectl) == "10.96.0.1"
    kubectl.run("create", "service", "clusterip", "web", "--tcp=80:8080")
    ip = kubectl.run("get", "svc", "web", "-o", "jsonpath={.spec.clusterIP}").stdout
    assert ipaddress.ip_address(ip) in ipaddress.ip_network(IP_RANGE)
    target = kubectl.run("get", "svc", "web", "-o", "jsonpath={.spec.ports[0].targetPort}")
    assert target.stdout == "8080"
    error = refused(
        kubectl, "create", "service", "clusterip", "copy", f"--clusterip={ip}", "--tcp=80"
    )
    assert error == (
        # kubectl create service wraps the server's message
        f'error: failed to create ClusterIP service: Service "copy" is invalid: spec.clusterIPs: Invalid value: ["{ip}"]: failed to allocate IP'
        f" {ip}: provided IP is already allocated"
    )
    error = refused(
        kubectl, "create", "service", "clusterip", "far", "--clusterip=10.0.0.9", "--tcp=80"
    )
    assert error.endswith(
        "failed to allocate IP 10.0.0.9: the provided IP (10.0.0.9) is not in the valid range. The range of"
        f" valid IPs is {IP_RANGE}"
    )
    kubectl.run("create", "service", "nodeport", "np", "--tcp=80", "--node-port=31500")
    error = refused(
        kubectl, "create", "service", "nodeport", "np2", "--tcp=80", "--node-port=31500"
    )
    assert error == (
        'error: failed to create NodePort service: Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 31500: provided port is'
        " already allocated"
    )
    error = refused(
        kubectl, "create", "service", "nodeport", "np3", "--tcp=80", "--node-port=30080"
    )
    assert error == (
        'error: failed to create NodePort service: Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is not in'
        f" the valid range. The range of valid ports is {PORT_RANGE}"
    )
    picked = kubectl.run("create", "service", "nodeport", "auto", "--tcp=80")
    assert picked.stdout.strip() == "service/auto created"
    port = int(kubectl.run("get", "svc", "auto", "-o", "jsonpath={.spec.ports[0].nodePort}").stdout)
    assert 31000 <= port <= 31999 and port != 31500

    # the allocations are stored: a restarted server still refuses them, and gives them back on delete
    server.stop()
    server.start()
    error = refused(
        kubectl, "create", "service", "clusterip", "copy", f"--clusterip={ip}", "--tcp=80"
    )
    assert error.endswith("provided IP is already allocated")
    error = refused(
        kubectl, "create", "service", "nodeport", "np2", "--tcp=80", "--node-port=31500"
    )
    assert error.endswith("provided port is already allocated")
    kubectl.run("delete", "service", "web", "np")
    kubectl.run("create", "service", "clusterip", "copy", f"--clusterip={ip}", "--tcp=80")
    kubectl.run("create", "service", "nodeport", "np2", "--tcp=80", "--node-port=31500")
    table = kubectl.run("get", "svc", "-o", "name").stdout.split()
    assert sorted(table) == ["service/auto", "service/copy", "service/kubernetes", "service/np2"]


def test_a_bad_range_flag_is_a_usage_error(tmp_path: Path) -> None:
    process = ServerProcess(
        tmp_path, free_port(), extra_args=("--service-node-port-range", "40000-30000")
    )
    with pytest.raises(RuntimeError, match='invalid port range: "40000-30000"'):
        process.start()
