"""A CRD whose rules call the CEL libraries kube-apiserver enables (strings' substring, charAt, format and
strings.quote, sets, semver, two-variable comprehensions, existsOne, optional indexing) and whose printer columns use
client-go's JSONPath grammar (an escaped dot, a negative index, a filter): generated, then installed with
kubectl 1.33 into a real server, which judges sample objects as kube does and prints the columns.

The hostname rules are Gateway API TLSRoute's own (tests/fixtures/cel/SOURCE.md)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from generator.check import check_definitions
from generator.load import load_text
from tests.e2e.test_crd_runtime import wait_served
from tests.kubectl import Kubectl, cells, kubectl_binary
from tests.serverproc import ServerProcess

CRD_FILE = Path(__file__).parents[1] / "fixtures" / "cel" / "routes.cel.apiforge.example.yaml"
ROUTES = "/apis/cel.apiforge.example/v1/namespaces/default/routes"
GOOD: dict[str, Any] = {
    "apiVersion": "cel.apiforge.example/v1",
    "kind": "Route",
    "metadata": {"name": "good", "labels": {"strimzi.io/cluster": "my-cluster"}},
    "spec": {
        "hostnames": ["*.example.com", "a.example.com"],
        "name": "web",
        "ports": [{"name": "http", "number": 80}, {"name": "admin", "number": 8080}],
        "labels": {"team": "a"},
        "version": "v1.2",
    },
}
# each change to the good object, the field kube reports and its message
REFUSED = [
    ({"hostnames": ["10.0.0.1"]}, "spec.hostnames", "Hostnames cannot contain an IP"),
    (  # the schema's pattern refuses it too, and, as in kube, does not stop the rules
        {"hostnames": ["a.*.com"]},
        "spec.hostnames",
        "Wildcards on hostnames must be the first label, and the rest of hostname must be valid"
        " based on RFC-1123",
    ),
    ({"name": "-x"}, "spec.name", "name must not start with a dash"),
    ({"name": "x-y"}, "spec.name", '"x-y" is reserved'),
    (
        {"ports": [{"name": "a", "number": 90}, {"name": "b", "number": 80}]},
        "spec.ports",
        "ports must be in increasing order",
    ),
    ({"ports": [{"name": "ssh", "number": 22}]}, "spec.ports", "ports 22 and 23 are not allowed"),
    (
        {"ports": [{"name": "a", "number": 1}, {"name": "a", "number": 2}]},
        "spec.ports",
        "port names must be unique",
    ),
    (
        {"labels": {"k" * 16: "v" * 20}},
        "spec.labels",
        "label entries must be at most 24 characters",
    ),
    ({"labels": {"tier": "forbidden"}}, "spec.labels", "the forbidden tier is not allowed"),
    ({"version": "0.9"}, "spec.version", "version must be a semantic version above 1.0.0"),
]


def test_the_crd_generates() -> None:
    """apiforge generate's checks (static cost included) accept the CRD, as kube's CRD validation does."""
    loaded = load_text(CRD_FILE.read_text(), CRD_FILE)
    check_definitions(loaded.definitions, loaded.sources)


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    tool = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("kubectl-cache"))
    tool.run("apply", "-f", str(CRD_FILE))
    return tool


@pytest.fixture(scope="module")
def routes(client: httpx.Client, kubectl: Kubectl) -> str:
    wait_served(client, ROUTES)
    return ROUTES


def test_a_good_object_is_created_and_its_columns_printed(routes: str, kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump(GOOD))
    table = cells(kubectl.run("get", "routes", "good").stdout)
    assert table == [
        ["NAME", "CLUSTER", "FIRST-HOST", "LAST-PORT", "ADMIN-PORT"],
        ["good", "my-cluster", "*.example.com", "8080", "8080"],
    ]


@pytest.mark.parametrize(("change", "field", "message"), REFUSED, ids=[r[2] for r in REFUSED])
def test_a_bad_object_is_refused_with_the_rules_message(
    client: httpx.Client, routes: str, change: dict[str, Any], field: str, message: str
) -> None:
    bad = copy.deepcopy(GOOD)
    bad["metadata"]["name"] = "bad"
    bad["spec"].update(change)
    answer = client.post(routes, json=bad)
    assert answer.status_code == 422, answer.text
    status = answer.json()
    assert status["reason"] == "Invalid"
    rules = [c for c in status["details"]["causes"] if c["field"] == field]
    assert [c["reason"] for c in rules] == ["FieldValueInvalid"]
    assert rules[0]["message"].endswith(message)
    assert client.get(f"{routes}/bad").status_code == 404


def test_kubectl_shows_the_refusal(routes: str, kubectl: Kubectl) -> None:
    bad = copy.deepcopy(GOOD)
    bad["metadata"]["name"] = "dashed"
    bad["spec"]["name"] = "-dash"
    result = kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump(bad), check=False)
    assert result.returncode == 1
    assert 'spec.name: Invalid value: "-dash": name must not start with a dash' in result.stderr
