"""The RBAC kinds over HTTP (in process, AlwaysAllow): kube's validation messages (pkg/apis/rbac/validation),
defaulting, names with colons, the immutable roleRef, the bootstrap policy and its reconciliation, and the
aggregation of ClusterRoles."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from builtin.rbac.aggregation import aggregated_rules, selector_requirements
from builtin.rbac.bootstrap import reconcile_binding, reconcile_role
from builtin.rbac.bootstrappolicy import AUTOUPDATE, cluster_role_bindings, cluster_roles
from tests.inprocess import InProcessServer

RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with InProcessServer() as server, server.client() as client:
        yield client


def test_invalid_roles_get_kubes_messages(http: httpx.Client) -> None:
    bad = {
        "metadata": {"name": "bad"},
        "rules": [
            {"resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
        ],
    }
    answer = http.post(f"{RBAC}/namespaces/default/roles", json=bad)
    assert answer.status_code == 422
    assert answer.json()["message"] == (
        'Role.rbac.authorization.k8s.io "bad" is invalid: [rules[0].verbs: Required value: verbs must'
        " contain at least one value, rules[0].apiGroups: Required value: resource rules must supply at"
        ' least one api group, rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules'
        " cannot apply to non-resource URLs]"
    )
    mixed = {
        "metadata": {"name": "mixed"},
        "rules": [{"verbs": ["get"], "resources": ["pods"], "nonResourceURLs": ["/x"]}],
        "aggregationRule": {"clusterRoleSelectors": []},
    }
    answer = http.post(f"{RBAC}/clusterroles", json=mixed)
    assert answer.status_code == 422
    causes = {(c["field"], c["message"]) for c in answer.json()["details"]["causes"]}
    assert causes == {
        (
            "rules[0].nonResourceURLs",
            'Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs',
        ),
        (
            "aggregationRule.clusterRoleSelectors",
            "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
        ),
    }


def test_bindings_are_defaulted_validated_and_keep_their_role_ref(http: httpx.Client) -> None:
    binding = {
        "metadata": {"name": "system:ci"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "ServiceAccount", "name": "ci", "namespace": "build"},
        ],
    }
    created = http.post(f"{RBAC}/namespaces/default/rolebindings", json=binding)
    assert created.status_code == 201, created.text
    assert created.json()["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert created.json()["subjects"] == [
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "ServiceAccount", "name": "ci", "namespace": "build"},
    ]
    changed = created.json()
    changed["roleRef"]["name"] = "edit"
    refused = http.put(f"{RBAC}/namespaces/default/rolebindings/system:ci", json=changed)
    assert refused.status_code == 422
    assert refused.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io",'
            ' Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
            "field": "roleRef",
        }
    ]
    bad = {
        "metadata": {"name": "bad"},
        "roleRef": {"apiGroup": "example.com", "kind": "Role", "name": "x"},
        "subjects": [
            {"kind": "Robot", "name": "r2"},
            {"kind": "ServiceAccount", "name": "ci"},
            {"kind": "Group", "name": ""},
        ],
    }
    refused = http.post(f"{RBAC}/clusterrolebindings", json=bad)
    assert refused.status_code == 422
    assert [(c["field"], c["message"]) for c in refused.json()["details"]["causes"]] == [
        (
            "roleRef.apiGroup",
            'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        ),
        ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
        (
            "subjects[0].kind",
            'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        ),
        ("subjects[1].namespace", "Required value"),
        ("subjects[2].name", "Required value"),
    ]
    dotted = {**binding, "metadata": {"name": "a/b"}}
    assert http.post(f"{RBAC}/namespaces/default/rolebindings", json=dotted).status_code == 422


def test_the_bootstrap_policy_is_served(http: httpx.Client) -> None:
    names = {item["metadata"]["name"] for item in http.get(f"{RBAC}/clusterroles").json()["items"]}
    assert {
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
        "system:aggregate-to-admin",
        "system:aggregate-to-edit",
        "system:aggregate-to-view",
        "apiforge:stable.example.com:view",
        "apiforge:stable.example.com:edit",
    } <= names
    # aggregated before the server serves: view into edit into admin
    admin_rules = http.get(f"{RBAC}/clusterroles/admin").json()["rules"]
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]} in (
        admin_rules
    )
    masters = http.get(f"{RBAC}/clusterrolebindings/cluster-admin").json()
    assert masters["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}
    ]
    assert masters["metadata"]["annotations"] == {AUTOUPDATE: "true"}
    table = http.get(
        f"{RBAC}/namespaces/default/rolebindings",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    assert [c["name"] for c in table.json()["columnDefinitions"]][:3] == ["Name", "Role", "Age"]


def test_reconciliation_restores_what_is_missing_and_respects_autoupdate_false() -> None:
    expected = next(
        r
        for r in cluster_roles({("", "configmaps")}, [])
        if r["metadata"]["name"] == "system:discovery"
    )
    edited = copy.deepcopy(expected)
    edited["rules"] = [{"verbs": ["get"], "nonResourceURLs": ["/api", "/custom"]}]
    edited["metadata"]["labels"] = {"mine": "yes"}
    reconciled = reconcile_role(copy.deepcopy(edited), expected)
    assert reconciled is not None
    assert {"verbs": ["get"], "nonResourceURLs": ["/api", "/custom"]} in reconciled["rules"]
    assert {"verbs": ["get"], "nonResourceURLs": ["/version"]} in reconciled["rules"]
    assert reconciled["metadata"]["labels"] == {
        "mine": "yes",
        "kubernetes.io/bootstrapping": "rbac-defaults",
    }
    assert reconcile_role(copy.deepcopy(expected), expected) is None
    edited["metadata"]["annotations"] = {AUTOUPDATE: "false"}
    assert reconcile_role(edited, expected) is None
    binding = cluster_role_bindings()[0]
    emptied = {**copy.deepcopy(binding), "subjects": [{"kind": "User", "name": "me"}]}
    restored = reconcile_binding(emptied, binding)
    assert restored is not None
    assert restored["subjects"] == [{"kind": "User", "name": "me"}, *binding["subjects"]]


def test_the_base_rules_name_only_served_kinds() -> None:
    roles = {r["metadata"]["name"]: r for r in cluster_roles({("", "configmaps")}, [])}
    assert roles["system:aggregate-to-view"]["rules"] == [
        {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["configmaps"]}
    ]
    assert roles["system:aggregate-to-admin"]["rules"] == []


def labelled(name: str, labels: dict[str, str], rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "rules": rules}


def test_aggregation_unions_matching_roles_by_name_each_rule_once() -> None:
    get = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    put = {"verbs": ["update"], "apiGroups": [""], "resources": ["pods"]}
    owner = {
        "metadata": {"name": "agg", "labels": {"x": "1"}},
        "aggregationRule": {
            "clusterRoleSelectors": [
                {"matchLabels": {"x": "1"}},
                {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
            ]
        },
    }
    roles = {
        "agg": owner,
        "b": labelled("b", {"x": "1"}, [get, put]),
        "a": labelled("a", {"tier": "b"}, [put]),
        "c": labelled("c", {"x": "2"}, [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]),
    }
    assert aggregated_rules(owner, roles) == [put, get]
    assert selector_requirements({}) == ()
    assert selector_requirements({"matchExpressions": [{"key": "k", "operator": "Near"}]}) is None
