"""`kubectl apply` (client-side, kubectl's default) twice with a change, for every shipped kind a client may
patch: the second apply sends a strategic merge patch, which kube-apiserver takes for all its compiled types
(the merge keys of k8s.io/api's Go tags) and refuses only for custom resources (415, after which kubectl
sends a JSON merge patch). The table must cover every patchable resource discovery lists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess
from tests.shipped import assert_status

NAMESPACE = "apply-kinds"
RULES = "[{{apiGroups: [''], resources: [configmaps], verbs: [{value}]}}]"
SUBJECTS = "[{{kind: User, apiGroup: rbac.authorization.k8s.io, name: {value}}}]"
WEBHOOK = """\
webhooks:
  - name: {value}.example.com
    clientConfig: {{url: "https://hook.example.com/{value}"}}
    sideEffects: None
    admissionReviewVersions: [v1]
    matchConditions: [{{name: {value}, expression: "true"}}]
    rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
"""
MATCH = "{{resourceRules: [{{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}]}}"
CRD_SPEC = """\
spec:
  group: applied.example.com
  scope: Namespaced
  names: {{plural: gizmos, singular: gizmo, kind: Gizmo, shortNames: [{value}]}}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {{openAPIV3Schema: {{type: object, properties: {{spec: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}}}
"""


@dataclass(frozen=True)
class Case:
    """A kind's manifest (``{value}`` is what the second apply changes) and the JSONPath that reads it back."""

    resource: str  # plural.group as discovery names it
    manifest: str
    path: str


CASES = [
    Case("configmaps", "apiVersion: v1\nkind: ConfigMap\ndata: {{key: {value}}}\n", "{.data.key}"),
    Case("secrets", "apiVersion: v1\nkind: Secret\nstringData: {{key: {value}}}\n", "{.data.key}"),
    Case(
        "events",
        "apiVersion: v1\nkind: Event\ninvolvedObject: {{kind: Pod, name: p, namespace: apply-kinds}}\n"
        "reason: Tested\nmessage: {value}\n",
        "{.message}",
    ),
    Case(
        "events.events.k8s.io",
        "apiVersion: events.k8s.io/v1\nkind: Event\neventTime: '2024-01-01T00:00:00.000000Z'\n"
        "reportingController: example.com/tester\nreportingInstance: tester-1\naction: Test\n"
        "reason: Tested\ntype: Normal\nregarding: {{kind: Pod, name: p, namespace: apply-kinds}}\n",
        "{.metadata.labels.step}",  # kube's ValidateEventUpdate: all but series and metadata is immutable
    ),
    Case(
        "namespaces",
        "apiVersion: v1\nkind: Namespace\nspec: {{finalizers: [{value}]}}\n",
        "{.spec.finalizers[0]}",
    ),
    Case(
        "services",
        "apiVersion: v1\nkind: Service\nspec: {{ports: [{{port: 80, name: {value}}}]}}\n",
        "{.spec.ports[0].name}",
    ),
    Case(
        "serviceaccounts",
        "apiVersion: v1\nkind: ServiceAccount\nimagePullSecrets: [{{name: {value}}}]\n",
        "{.imagePullSecrets[0].name}",
    ),
    Case(
        "leases.coordination.k8s.io",
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nspec: {{holderIdentity: {value}}}\n",
        "{.spec.holderIdentity}",
    ),
    Case(
        "clusterroles.rbac.authorization.k8s.io",
        f"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nrules: {RULES}\n",
        "{.rules[0].verbs[0]}",
    ),
    Case(
        "roles.rbac.authorization.k8s.io",
        f"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nrules: {RULES}\n",
        "{.rules[0].verbs[0]}",
    ),
    Case(
        "clusterrolebindings.rbac.authorization.k8s.io",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
        "roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}}\n"
        f"subjects: {SUBJECTS}\n",
        "{.subjects[0].name}",
    ),
    Case(
        "rolebindings.rbac.authorization.k8s.io",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
        "roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}}\n"
        f"subjects: {SUBJECTS}\n",
        "{.subjects[0].name}",
    ),
    Case(
        "validatingwebhookconfigurations.admissionregistration.k8s.io",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
        + WEBHOOK,
        "{.webhooks[0].matchConditions[0].name}",
    ),
    Case(
        "mutatingwebhookconfigurations.admissionregistration.k8s.io",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
        + WEBHOOK,
        "{.webhooks[0].matchConditions[0].name}",
    ),
    Case(
        "validatingadmissionpolicies.admissionregistration.k8s.io",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
        f"spec: {{{{matchConstraints: {MATCH}, variables: [{{{{name: {{value}}, expression: 'true'}}}}],\n"
        "  validations: [{{expression: 'true'}}]}}\n",
        "{.spec.variables[0].name}",
    ),
    Case(
        "validatingadmissionpolicybindings.admissionregistration.k8s.io",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
        "spec: {{policyName: {value}, validationActions: [Deny]}}\n",
        "{.spec.policyName}",
    ),
    Case(
        "mutatingadmissionpolicies.admissionregistration.k8s.io",
        "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\n"
        f"spec: {{{{matchConstraints: {MATCH},\n"
        "  reinvocationPolicy: Never, matchConditions: [{{name: {value}, expression: 'true'}}],\n"
        "  mutations: [{{patchType: ApplyConfiguration,\n"
        '    applyConfiguration: {{expression: \'Object{{metadata: Object.metadata{{labels: {{"a": "b"}}}}}}\'}}}}]}}\n',
        "{.spec.matchConditions[0].name}",
    ),
    Case(
        "mutatingadmissionpolicybindings.admissionregistration.k8s.io",
        "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicyBinding\n"
        "spec: {{policyName: {value}}}\n",
        "{.spec.policyName}",
    ),
    Case(
        "customresourcedefinitions.apiextensions.k8s.io",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" + CRD_SPEC,
        "{.spec.names.shortNames[0]}",
    ),
    Case(
        "apiservices.apiregistration.k8s.io",
        "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\n"
        "spec: {{group: applied.example.com, version: v9, groupPriorityMinimum: 100, versionPriority: 10,\n"
        "  service: {{namespace: apply-kinds, name: {value}}}}}\n",
        "{.spec.service.name}",
    ),
    Case(
        "crontabs.stable.example.com",
        "apiVersion: stable.example.com/v1\nkind: CronTab\n"
        "spec: {{cronSpec: '* * * * */5', image: {value}, replicas: 1}}\n",
        "{.spec.image}",
    ),
    Case(
        "computeclusters.platform.example.com",
        "apiVersion: platform.example.com/v1alpha1\nkind: ComputeCluster\nspec: {{region: {value}}}\n",
        "{.spec.region}",
    ),
]

# a CRD's name is plural.group, an APIService's version.group
NAMES = {
    "customresourcedefinitions.apiextensions.k8s.io": "gizmos.applied.example.com",
    "apiservices.apiregistration.k8s.io": "v9.applied.example.com",
}


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    assert server.http("POST", "/api/v1/namespaces", json=body).status_code == 201
    yield Kubectl(
        kubectl_binary(33), server.kubeconfig, tmp_path_factory.mktemp("cache"), NAMESPACE
    )


def _manifest(case: Case, value: str) -> str:
    """The case's manifest with its name put after apiVersion and kind."""
    api_version, kind, body = case.manifest.split("\n", 2)
    name = NAMES.get(
        case.resource, case.resource.replace(".", "-")
    )  # core and events.k8s.io events share keys
    metadata = f"metadata: {{name: {name}, labels: {{step: {value}}}}}"
    return "\n".join((api_version, kind, metadata, body.format(value=value)))


def _patchable(server: ServerProcess) -> set[str]:
    """Every top-level resource discovery says takes patch, named plural.group (plural for the core group)."""
    groups = [("", "/api/v1")]
    for group in server.http("GET", "/apis").json()["groups"]:
        groups += [(group["name"], f"/apis/{v['groupVersion']}") for v in group["versions"]]
    names = set()
    for group, path in groups:
        for resource in server.http("GET", path).json()["resources"]:
            if "/" not in resource["name"] and "patch" in resource["verbs"]:
                names.add(f"{resource['name']}.{group}" if group else resource["name"])
    return names


def test_the_table_covers_every_patchable_resource(server: ServerProcess) -> None:
    assert _patchable(server) == {case.resource for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.resource)
def test_apply_twice_with_a_change(kubectl: Kubectl, tmp_path: Path, case: Case) -> None:
    manifest = tmp_path / "manifest.yaml"
    for value in ("first", "second"):
        manifest.write_text(_manifest(case, value))
        verb = "created" if value == "first" else "configured"
        output = kubectl.run("apply", "-f", str(manifest)).stdout
        assert output.rstrip().endswith(verb), output
        read = kubectl.run("get", "-f", str(manifest), "-o", f"jsonpath={case.path}").stdout
        expected = "c2Vjb25k" if case.resource == "secrets" else value  # base64 of "second"
        if value == "second":
            assert read == expected
    applied = json.loads(kubectl.run("get", "-f", str(manifest), "-o", "json").stdout)
    annotation = applied["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"
    ]
    assert "second" in annotation


WIDGETS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.smp.example.com}
spec:
  group: smp.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"""
WIDGET = (
    "apiVersion: smp.example.com/v1\nkind: Widget\nmetadata: {{name: w}}\nspec: {{size: {size}}}\n"
)


def test_a_custom_resource_refuses_strategic_merge_patch_and_kubectl_applies_it_anyway(
    server: ServerProcess, kubectl: Kubectl, tmp_path: Path
) -> None:
    """kube's customresource_handler.go serves JSON patch, merge patch and apply patch only; kubectl apply
    then falls back to a merge patch, so applying a custom resource twice works as well."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(WIDGETS)
    kubectl.run("apply", "-f", str(crd))
    kubectl.run("wait", "--for=condition=Established", "-f", str(crd), "--timeout=10s")
    widget = tmp_path / "widget.yaml"
    for size in (1, 2):
        widget.write_text(WIDGET.format(size=size))
        kubectl.run("apply", "-f", str(widget))
    assert kubectl.run("get", "-f", str(widget), "-o", "jsonpath={.spec.size}").stdout == "2"
    response = server.http(
        "PATCH",
        f"/apis/smp.example.com/v1/namespaces/{NAMESPACE}/widgets/w",
        content=json.dumps({"spec": {"size": 3}}),
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
