"""A small valid object of every patchable shipped kind, in a form a test changes in one place: the samples
kubectl applies twice and the server's answers are checked for nulls with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

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
        "apiVersion: v1\nkind: Namespace\nspec: {{finalizers: [kubernetes]}}\n",
        "{.metadata.labels.step}",  # kube's update keeps spec.finalizers (namespaces/finalize sets them)
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


def manifest(case: Case, value: str) -> str:
    """The case's manifest with its name put after apiVersion and kind."""
    api_version, kind, body = case.manifest.split("\n", 2)
    name = NAMES.get(
        case.resource, case.resource.replace(".", "-")
    )  # core and events.k8s.io events share keys
    metadata = f"metadata: {{name: {name}, labels: {{step: {value}}}}}"
    return "\n".join((api_version, kind, metadata, body.format(value=value)))


def sample(case: Case, value: str) -> dict[str, Any]:
    """The manifest as the object a client sends."""
    document: dict[str, Any] = yaml.safe_load(manifest(case, value))
    return document
