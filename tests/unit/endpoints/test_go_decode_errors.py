"""A built-in kind's body with a value its Go struct cannot hold is refused with the Go decoder's own error,
before anything validates it (kube decodes the body with encoding/json first: transformDecodeError in
k8s.io/apiserver/pkg/endpoints/handlers). The message names the innermost Go struct, the JSON path of the
struct fields crossed and the field's Go type: one case per shipped kind (and ObjectMeta, int-or-string,
named string types, times, bytes, UIDs, the first value in document order), each answered so by
kube-apiserver v1.34.4 (the differential oracle)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.shipped import assert_status

NS = "/api/v1/namespaces/default"
ADM = "/apis/admissionregistration.k8s.io/v1"
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "configmap-array",
        f"{NS}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": ["a", "list"]},
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string',
    ),
    (
        "metadata-labels",
        f"{NS}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": 1}}},
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    ),
    (
        "owner-reference",
        f"{NS}/configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "a", "ownerReferences": [{"controller": "yes"}]},
        },
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool',
    ),
    (
        "first-in-document",
        f"{NS}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "a"},
            "spec": {"type": 1, "ports": [{"port": "80"}]},
        },
        'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal number into Go struct field ServiceSpec.spec.type of type v1.ServiceType',
    ),
    (
        "service-target-port",
        f"{NS}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "a"},
            "spec": {"ports": [{"port": 80, "targetPort": [8080]}]},
        },
        'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal array into Go struct field ServicePort.spec.ports.targetPort of type int32',
    ),
    (
        "secret-data-bytes",
        f"{NS}/secrets",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "data": {"k": 1}},
        'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.data of type []uint8',
    ),
    (
        "secret-type",
        f"{NS}/secrets",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "type": True},
        'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal bool into Go struct field Secret.type of type v1.SecretType',
    ),
    (
        "namespace-finalizers",
        "/api/v1/namespaces",
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "a"},
            "spec": {"finalizers": [1]},
        },
        'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName',
    ),
    (
        "event-uid",
        f"{NS}/events",
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "a"},
            "involvedObject": {"uid": 7},
        },
        'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal number into Go struct field ObjectReference.involvedObject.uid of type types.UID',
    ),
    (
        "event-count",
        f"{NS}/events",
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "a"},
            "involvedObject": {},
            "count": "3",
        },
        'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal string into Go struct field Event.count of type int32',
    ),
    (
        "serviceaccount",
        f"{NS}/serviceaccounts",
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "a"},
            "automountServiceAccountToken": "no",
        },
        'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal string into Go struct field ServiceAccount.automountServiceAccountToken of type bool',
    ),
    (
        "lease-time",
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "a"},
            "spec": {"renewTime": {}},
        },
        'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal object into Go struct field LeaseSpec.spec.renewTime of type string',
    ),
    (
        "events-k8s-io",
        "/apis/events.k8s.io/v1/namespaces/default/events",
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "a"},
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "regarding": "pod",
        },
        'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal string into Go struct field Event.regarding of type v1.ObjectReference',
    ),
    (
        "role",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "a"},
            "rules": [{"verbs": ["get"], "apiGroups": "apps"}],
        },
        'Role in version "v1" cannot be handled as a Role: json: cannot unmarshal string into Go struct field PolicyRule.rules.apiGroups of type []string',
    ),
    (
        "rolebinding",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "a"},
            "roleRef": {"kind": 1},
        },
        'RoleBinding in version "v1" cannot be handled as a RoleBinding: json: cannot unmarshal number into Go struct field RoleRef.roleRef.kind of type string',
    ),
    (
        "clusterrole-selector",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "a"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchExpressions": [{"operator": 1}]}]},
        },
        'ClusterRole in version "v1" cannot be handled as a ClusterRole: json: cannot unmarshal number into Go struct field LabelSelectorRequirement.aggregationRule.clusterRoleSelectors.matchExpressions.operator of type v1.LabelSelectorOperator',
    ),
    (
        "webhook",
        f"{ADM}/validatingwebhookconfigurations",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "a"},
            "webhooks": [{"name": "a.b.c", "timeoutSeconds": 1.5}],
        },
        'ValidatingWebhookConfiguration in version "v1" cannot be handled as a ValidatingWebhookConfiguration: json: cannot unmarshal number 1.5 into Go struct field ValidatingWebhook.webhooks.timeoutSeconds of type int32',
    ),
    (
        "mutating-webhook",
        f"{ADM}/mutatingwebhookconfigurations",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "a"},
            "webhooks": [{"name": "a.b.c", "reinvocationPolicy": False}],
        },
        'MutatingWebhookConfiguration in version "v1" cannot be handled as a MutatingWebhookConfiguration: json: cannot unmarshal bool into Go struct field MutatingWebhook.webhooks.reinvocationPolicy of type v1.ReinvocationPolicyType',
    ),
    (
        "policy",
        f"{ADM}/validatingadmissionpolicies",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "a"},
            "spec": {"validations": [{"expression": True}]},
        },
        'ValidatingAdmissionPolicy in version "v1" cannot be handled as a ValidatingAdmissionPolicy: json: cannot unmarshal bool into Go struct field Validation.spec.validations.expression of type string',
    ),
    (
        "policy-binding",
        f"{ADM}/validatingadmissionpolicybindings",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "a"},
            "spec": {"validationActions": "Deny"},
        },
        'ValidatingAdmissionPolicyBinding in version "v1" cannot be handled as a ValidatingAdmissionPolicyBinding: json: cannot unmarshal string into Go struct field ValidatingAdmissionPolicyBindingSpec.spec.validationActions of type []v1.ValidationAction',
    ),
    (
        "crd",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "as.b.c"},
            "spec": {"scope": 1},
        },
        'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal number into Go struct field CustomResourceDefinitionSpec.spec.scope of type v1.ResourceScope',
    ),
    (
        "apiservice",
        "/apis/apiregistration.k8s.io/v1/apiservices",
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1.b.c"},
            "spec": {"service": {"port": "443"}},
        },
        'APIService in version "v1" cannot be handled as a APIService: json: cannot unmarshal string into Go struct field ServiceReference.spec.service.port of type int32',
    ),
    (
        "tokenreview",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "metadata": {},
            "spec": {"audiences": "api"},
        },
        'TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field TokenReviewSpec.spec.audiences of type []string',
    ),
    (
        "selfsubjectaccessreview",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "metadata": {},
            "spec": {"resourceAttributes": {"verb": ["get"]}},
        },
        'SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: json: cannot unmarshal array into Go struct field ResourceAttributes.spec.resourceAttributes.verb of type string',
    ),
    (
        "subjectaccessreview",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "metadata": {},
            "spec": {"groups": {}},
        },
        'SubjectAccessReview in version "v1" cannot be handled as a SubjectAccessReview: json: cannot unmarshal object into Go struct field SubjectAccessReviewSpec.spec.groups of type []string',
    ),
    (
        "selfsubjectrulesreview",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectRulesReview",
            "metadata": {},
            "spec": {"namespace": 5},
        },
        'SelfSubjectRulesReview in version "v1" cannot be handled as a SelfSubjectRulesReview: json: cannot unmarshal number into Go struct field SelfSubjectRulesReviewSpec.spec.namespace of type string',
    ),
    (
        "localsubjectaccessreview",
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "LocalSubjectAccessReview",
            "metadata": {"namespace": "default"},
            "spec": {"nonResourceAttributes": {"path": 1}},
        },
        'LocalSubjectAccessReview in version "v1" cannot be handled as a LocalSubjectAccessReview: json: cannot unmarshal number into Go struct field NonResourceAttributes.spec.nonResourceAttributes.path of type string',
    ),
    (
        "selfsubjectreview",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "SelfSubjectReview",
            "metadata": {},
            "status": {"userInfo": {"groups": "a"}},
        },
        'SelfSubjectReview in version "v1" cannot be handled as a SelfSubjectReview: json: cannot unmarshal string into Go struct field UserInfo.status.userInfo.groups of type []string',
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_a_value_go_cannot_decode_gets_gos_error(
    api: httpx.Client, path: str, body: dict[str, Any], message: str
) -> None:
    status = assert_status(api.post(path, json=body), 400, "BadRequest")
    assert status["message"] == message
