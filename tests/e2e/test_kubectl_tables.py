"""kubectl get, -o wide and explain print what they print on Kubernetes: kube's printers for the built-in kinds
(pkg/printers/internalversion/printers.go), the CRD table convertor's cells (JSON for lists and maps), and
explain's types from OpenAPI named as kube names them (``<IntOrString>``), the auth groups included.

One server and kubectl 1.33; rows are compared column by
column, AGE excepted where it may tick."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.kubectl import EVENT_COLUMNS, Kubectl, cells, kubectl_binary
from tests.serverproc import ServerProcess

NAMESPACE = "tables"
MANIFESTS = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web, tier: front}
  ports:
    - {name: http, port: 80, targetPort: 8080}
    - {name: https, port: 443, targetPort: https}
---
apiVersion: v1
kind: Service
metadata: {name: outside}
spec:
  type: ExternalName
  externalName: example.com
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
type: kubernetes.io/basic-auth
stringData: {username: admin, password: hunter2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1", b: "2"}
binaryData: {c: AA==}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
  - {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
  - {kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}
  - {kind: Group, name: auditors, apiGroup: rbac.authorization.k8s.io}
  - {kind: ServiceAccount, name: robot, namespace: tables}
---
apiVersion: v1
kind: Event
metadata: {name: web.1}
involvedObject: {kind: Service, name: web, namespace: tables}
reason: Synced
message: "  synced the service  "
type: Normal
source: {component: tester, host: node-1}
count: 3
firstTimestamp: "2020-01-01T00:00:00Z"
lastTimestamp: "2020-01-02T00:00:00Z"
"""


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    assert server.http("POST", "/api/v1/namespaces", json=body).status_code == 201
    cache = tmp_path_factory.mktemp("kubectl-cache")
    client = Kubectl(kubectl_binary(33), server.kubeconfig, cache, NAMESPACE)
    client.run("apply", "-f", "-", stdin=MANIFESTS)
    yield client


def test_services_print_type_ips_ports_and_wide_selector(kubectl: Kubectl) -> None:
    table = cells(kubectl.run("get", "services").stdout)
    assert table[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    by_name = {row[0]: row for row in table[1:]}
    assert by_name["web"][1:5] == ["ClusterIP", by_name["web"][2], "<none>", "80/TCP,443/TCP"]
    assert by_name["outside"][1:5] == ["ExternalName", "<none>", "example.com", "<none>"]
    wide = cells(kubectl.run("get", "service", "web", "-o", "wide").stdout)
    assert wide[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert wide[1][-1] == "app=web,tier=front"


def test_secrets_and_configmaps_count_their_data(kubectl: Kubectl) -> None:
    secrets = cells(kubectl.run("get", "secret", "creds").stdout)
    assert secrets[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert secrets[1][:3] == ["creds", "kubernetes.io/basic-auth", "2"]
    configmaps = cells(kubectl.run("get", "configmap", "settings").stdout)
    assert configmaps[0] == ["NAME", "DATA", "AGE"]
    assert configmaps[1][:2] == ["settings", "3"]  # data and binaryData together


def test_namespaces_print_their_phase(kubectl: Kubectl) -> None:
    table = cells(kubectl.run("get", "namespace", NAMESPACE).stdout)
    assert table[0] == ["NAME", "STATUS", "AGE"]
    assert table[1][:2] == [NAMESPACE, "Active"]


def test_service_accounts_count_their_secrets(kubectl: Kubectl) -> None:
    table = cells(kubectl.run("get", "serviceaccount", "default").stdout)
    assert table[0] == ["NAME", "SECRETS", "AGE"]
    assert table[1][:2] == ["default", "0"]


def test_role_bindings_name_the_role_and_wide_the_subjects(kubectl: Kubectl) -> None:
    table = cells(kubectl.run("get", "rolebinding", "readers").stdout)
    assert table[0] == ["NAME", "ROLE", "AGE"]
    assert table[1][:2] == ["readers", "ClusterRole/view"]
    wide = cells(kubectl.run("get", "rolebinding", "readers", "-o", "wide").stdout)
    assert wide[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert wide[1][3:] == ["alice, bob", "auditors", "tables/robot"]
    roles = cells(kubectl.run("get", "clusterrole", "view").stdout)
    assert roles[0] == ["NAME", "CREATED AT"]
    assert roles[1][1].endswith("Z") and "T" in roles[1][1]


def test_events_print_kube_columns_with_the_name_last(kubectl: Kubectl) -> None:
    table = cells(kubectl.run("get", "events").stdout)
    assert table[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    row = next(r for r in table[1:] if r[2] == "Synced")
    assert row[1:] == ["Normal", "Synced", "service/web", "synced the service"]
    assert row[0].endswith("d") or row[0].endswith("y") or "y" in row[0]  # years ago: 2020
    wide = cells(kubectl.run("get", "events", "-o", "wide").stdout)
    assert wide[0] == EVENT_COLUMNS
    row = next(r for r in wide[1:] if r[-1] == "web.1")
    assert row[5] == "tester, node-1" and row[8] == "3"


def test_crd_columns_print_maps_as_json(kubectl: Kubectl) -> None:
    """tableconvertor_test.go ("Return table with additional column containing multiple string values"): a
    map or list in a string column is its JSON, ``{"env":"prod","team":"a&b"}`` (Go's encoding, keys sorted),
    not Python's ``{'team': 'a&b', ...}``; an int-or-string prints as text."""
    cluster = {
        "apiVersion": "platform.example.com/v1alpha1",
        "kind": "ComputeCluster",
        "metadata": {"name": "tables-eu"},
        "spec": {"region": "eu", "labels": {"team": "a&b", "env": "prod"}, "maxPods": 110},
    }
    kubectl.run("apply", "-f", "-", stdin=json.dumps(cluster))
    wide = cells(kubectl.run("get", "computecluster", "tables-eu", "-o", "wide").stdout)
    assert wide[0] == ["NAME", "REGION", "NODES", "PHASE", "AGE", "LABELS", "MAX PODS"]
    assert wide[1][:4] == ["tables-eu", "eu", "3", ""]  # no status yet: a null cell prints empty
    assert wide[1][5:] == ['{"env":"prod","team":"a\\u0026b"}', "110"]


def test_explain_service_ports_shows_int_or_string(kubectl: Kubectl) -> None:
    output = kubectl.run("explain", "svc.spec.ports").stdout
    assert "FIELD: ports <[]ServicePort>" in output
    assert "targetPort\t<IntOrString>" in output
    assert "port\t<integer> -required-" in output


def test_explain_the_auth_groups(kubectl: Kubectl) -> None:
    output = kubectl.run("explain", "selfsubjectreview").stdout
    assert "GROUP:      authentication.k8s.io" in output
    assert "KIND:       SelfSubjectReview" in output
    assert "status\t<SelfSubjectReviewStatus>" in output
    review = kubectl.run("explain", "subjectaccessreview.spec").stdout
    assert "FIELD: spec <SubjectAccessReviewSpec>" in review
    assert "resourceAttributes\t<ResourceAttributes>" in review
