"""RBAC end to end over the in-process server with `--authorization-mode=RBAC`: users told
apart by a test bearer token (tests/inprocess.py BearerUsers), each request through the real filter chain.
Expected messages are kube's (plugin/pkg/auth/authorizer/rbac, pkg/registry/rbac/validation)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.inprocess import BearerUsers, InProcessServer, build_app

RBAC = "/apis/rbac.authorization.k8s.io/v1"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ADMIN = {"Authorization": "Bearer root/system:masters"}
ALICE = {"Authorization": "Bearer alice/system:authenticated"}
SETTLE_SECONDS = 5.0


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    app = build_app(authorization_mode="RBAC", authenticators=[BearerUsers()])
    with InProcessServer(app) as server, server.client() as client:
        yield client


def eventually(check: Callable[[], Any]) -> Any:
    """The authorizer and the aggregation controller follow writes through watches: poll until ``check``
    returns something truthy (or fail after a few seconds)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.02)


def binding_of(name: str, role: str, user: str, kind: str = "ClusterRole") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"kind": "User", "name": user}],
    }


def bind(http: httpx.Client, namespace: str, name: str, role: str, user: str) -> None:
    """A RoleBinding of ClusterRole ``role`` to ``user``, made by the administrator."""
    body = binding_of(name, role, user)
    created = http.post(f"{RBAC}/namespaces/{namespace}/rolebindings", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text


def test_a_user_without_bindings_gets_kubes_403_then_reads_after_a_binding_to_view(
    http: httpx.Client,
) -> None:
    refused = http.get(CONFIGMAPS, headers=ALICE)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group ""'
        ' in the namespace "default"'
    )
    assert refused.json()["details"] == {"kind": "configmaps"}
    bind(http, "default", "alice-view", "view", "alice")
    assert eventually(lambda: http.get(CONFIGMAPS, headers=ALICE).status_code == 200)
    created = http.post(CONFIGMAPS, json={"metadata": {"name": "x"}}, headers=ALICE)
    assert created.status_code == 403
    assert created.json()["message"].endswith(
        'User "alice" cannot create resource "configmaps" in API group "" in the namespace "default"'
    )
    # a RoleBinding grants in its own namespace only; secrets are not in view
    elsewhere = http.get("/api/v1/namespaces/kube-system/configmaps", headers=ALICE)
    assert elsewhere.status_code == 403
    assert http.get("/api/v1/namespaces/default/secrets", headers=ALICE).status_code == 403


def test_the_custom_kinds_aggregate_into_view_and_edit(http: httpx.Client) -> None:
    crontabs = "/apis/stable.example.com/v1/namespaces/kube-public/crontabs"
    bob = {"Authorization": "Bearer bob/system:authenticated"}
    refused = http.get(crontabs, headers=bob)
    assert refused.json()["message"] == (
        'crontabs.stable.example.com is forbidden: User "bob" cannot list resource "crontabs" in API'
        ' group "stable.example.com" in the namespace "kube-public"'
    )
    bind(http, "kube-public", "bob-edit", "edit", "bob")
    assert eventually(lambda: http.get(crontabs, headers=bob).status_code == 200)
    crontab = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "nightly"},
        "spec": {"cronSpec": "* * * * */5", "image": "busybox"},
    }
    assert http.post(crontabs, json=crontab, headers=bob).status_code == 201
    # edit may not write roles (admin may)
    role = {"metadata": {"name": "r"}, "rules": []}
    assert (
        http.post(f"{RBAC}/namespaces/kube-public/roles", json=role, headers=bob).status_code == 403
    )


def test_self_subject_rules_review_lists_what_a_binding_grants(http: httpx.Client) -> None:
    carol = {"Authorization": "Bearer carol/system:authenticated"}
    bind(http, "kube-node-lease", "carol-view", "view", "carol")

    def rules() -> dict[str, Any]:
        review = {"spec": {"namespace": "kube-node-lease"}}
        answer = http.post(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json=review, headers=carol
        )
        assert answer.status_code == 201, answer.text
        status: dict[str, Any] = answer.json()["status"]
        return status

    status = eventually(lambda: s if len((s := rules())["resourceRules"]) > 2 else None)
    assert status["incomplete"] is False
    resource_rules = status["resourceRules"]
    assert {
        "verbs": ["get", "list", "watch"],
        "apiGroups": [""],
        "resources": ["serviceaccounts", "services", "services/status", "configmaps"],
    } in resource_rules
    assert {
        "verbs": ["create"],
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    } in resource_rules
    assert not any("secrets" in rule["resources"] for rule in resource_rules)
    assert {
        "verbs": ["get"],
        "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
    } in (status["nonResourceRules"])


def test_subject_access_review_answers_for_the_user_it_names(http: httpx.Client) -> None:
    bind(http, "default", "dave-view", "view", "dave")

    def review(user: str, verb: str) -> dict[str, Any]:
        body = {
            "spec": {
                "user": user,
                "resourceAttributes": {
                    "namespace": "default",
                    "verb": verb,
                    "resource": "configmaps",
                },
            }
        }
        answer = http.post(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews", json=body, headers=ADMIN
        )
        assert answer.status_code == 201, answer.text
        status: dict[str, Any] = answer.json()["status"]
        return status

    allowed = eventually(lambda: s if (s := review("dave", "list"))["allowed"] else None)
    assert allowed == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "dave-view/default" of ClusterRole "view" to User "dave"',
    }
    assert review("dave", "create") == {"allowed": False}
    assert review("eve", "list") == {"allowed": False}
    # asking is itself authorized: alice may not create SubjectAccessReviews
    body = {"spec": {"user": "x", "nonResourceAttributes": {"path": "/", "verb": "get"}}}
    refused = http.post(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews", json=body, headers=ALICE
    )
    assert refused.status_code == 403
    no_user = {"spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}
    invalid = http.post(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews", json=no_user, headers=ADMIN
    )
    assert invalid.status_code == 422
    assert (
        'spec.user: Invalid value: "": at least one of user or group must be specified'
        in (invalid.json()["message"])
    )
    local = {
        "spec": {
            "user": "dave",
            "resourceAttributes": {
                "namespace": "kube-system",
                "verb": "list",
                "resource": "configmaps",
            },
        }
    }
    mismatch = http.post(
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
        json=local,
        headers=ADMIN,
    )
    assert mismatch.status_code == 400
    assert (
        mismatch.json()["message"]
        == "spec.resourceAttributes.namespace must match namespace: default"
    )
    local["spec"]["resourceAttributes"]["namespace"] = "default"  # type: ignore[index]
    answered = http.post(
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
        json=local,
        headers=ADMIN,
    )
    assert answered.json()["status"]["allowed"] is True


def test_escalation_is_refused_unless_the_user_holds_the_rules_or_may_escalate_or_bind(
    http: httpx.Client,
) -> None:
    frank = {"Authorization": "Bearer frank/system:authenticated"}
    bind(http, "kube-public", "frank-admin", "admin", "frank")
    role = {
        "metadata": {"name": "secret-reader"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}],
    }
    roles = f"{RBAC}/namespaces/kube-public/roles"
    assert eventually(lambda: http.post(roles, json=role, headers=frank).status_code == 201)
    # admin holds no cluster-scoped rights: a role granting nodes is an escalation
    greedy = {
        "metadata": {"name": "greedy"},
        "rules": [
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
        ],
    }
    refused = http.post(roles, json=greedy, headers=frank)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'roles.rbac.authorization.k8s.io "greedy" is forbidden: user "frank" (groups=["system:authenticated"])'
        " is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}'
    )
    # binding cluster-admin in the namespace is an escalation too ...
    binding = binding_of("frank-everything", "cluster-admin", "frank")
    bindings = f"{RBAC}/namespaces/kube-public/rolebindings"
    refused_binding = http.post(bindings, json=binding, headers=frank)
    assert refused_binding.status_code == 403
    assert (
        "is attempting to grant RBAC permissions not currently held"
        in refused_binding.json()["message"]
    )
    # ... binding a role frank holds everything of is not
    holds = binding_of("someone-reads-secrets", "secret-reader", "frank", kind="Role")
    assert http.post(bindings, json=holds, headers=frank).status_code == 201
    # with `bind` on cluster-admin (granted by a ClusterRole the admin makes) the binding is allowed
    binder = {
        "metadata": {"name": "bind-cluster-admin"},
        "rules": [
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["clusterroles"],
                "verbs": ["bind"],
                "resourceNames": ["cluster-admin"],
            }
        ],
    }
    assert http.post(f"{RBAC}/clusterroles", json=binder, headers=ADMIN).status_code == 201
    bind(http, "kube-public", "frank-binder", "bind-cluster-admin", "frank")
    assert eventually(lambda: http.post(bindings, json=binding, headers=frank).status_code == 201)


def test_aggregated_cluster_roles_follow_label_changes(http: httpx.Client) -> None:
    extra = {
        "metadata": {
            "name": "widgets-reader",
            "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
        },
        "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}],
    }
    wanted = {"verbs": ["get"], "apiGroups": ["example.com"], "resources": ["widgets"]}
    assert http.post(f"{RBAC}/clusterroles", json=extra, headers=ADMIN).status_code == 201

    def rules_of(name: str) -> list[dict[str, Any]]:
        rules: list[dict[str, Any]] = http.get(f"{RBAC}/clusterroles/{name}", headers=ADMIN).json()[
            "rules"
        ]
        return rules

    # into view, and through view (labelled aggregate-to-edit) into edit, and so into admin
    for name in ("view", "edit", "admin"):
        assert eventually(lambda name=name: wanted in rules_of(name)), name
    patch = {"metadata": {"labels": {"rbac.authorization.k8s.io/aggregate-to-view": None}}}
    patched = http.patch(
        f"{RBAC}/clusterroles/widgets-reader",
        json=patch,
        headers={**ADMIN, "Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200
    for name in ("view", "edit", "admin"):
        assert eventually(lambda name=name: wanted not in rules_of(name)), name


def test_anonymous_reads_version_and_health_only(http: httpx.Client) -> None:
    assert eventually(lambda: http.get("/version").status_code == 200)
    assert http.get("/readyz").status_code == 200
    refused = http.get("/api/v1/namespaces")
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API'
        ' group "" at the cluster scope'
    )
    # an authenticated user may discover the API but not list namespaces
    assert http.get("/apis", headers=ALICE).status_code == 200
    assert http.get("/metrics", headers=ALICE).status_code == 403


def test_a_binding_to_a_missing_role_is_reported_in_the_reason(http: httpx.Client) -> None:
    bind(http, "default", "grace-ghost", "no-such-role", "grace")
    grace = {"Authorization": "Bearer grace/system:authenticated"}

    def refused() -> str:
        message: str = http.get(CONFIGMAPS, headers=grace).json()["message"]
        return message if message.endswith("not found") else ""

    assert eventually(refused).endswith(
        ': RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found'
    )


def test_an_aggregation_rule_takes_cluster_admin_rights(http: httpx.Client) -> None:
    writer = {
        "metadata": {"name": "clusterrole-writer"},
        "rules": [
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["clusterroles"],
                "verbs": ["create"],
            }
        ],
    }
    assert http.post(f"{RBAC}/clusterroles", json=writer, headers=ADMIN).status_code == 201
    binding = binding_of("henry-writes-clusterroles", "clusterrole-writer", "henry")
    assert http.post(f"{RBAC}/clusterrolebindings", json=binding, headers=ADMIN).status_code == 201
    henry = {"Authorization": "Bearer henry/system:authenticated"}
    empty = {"metadata": {"name": "henrys-empty-role"}, "rules": []}
    assert eventually(
        lambda: http.post(f"{RBAC}/clusterroles", json=empty, headers=henry).status_code == 201
    )
    gathering = {
        "metadata": {"name": "henrys-gatherer"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"anything": "true"}}]},
    }
    refused = http.post(f"{RBAC}/clusterroles", json=gathering, headers=henry)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'clusterroles.rbac.authorization.k8s.io "henrys-gatherer" is forbidden: must have cluster-admin'
        " privileges to use the aggregationRule"
    )


def test_escalate_lets_a_user_write_a_role_granting_more_than_they_hold(http: httpx.Client) -> None:
    escalator = {
        "metadata": {"name": "role-escalator"},
        "rules": [
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["roles"],
                "verbs": ["create", "escalate"],
            }
        ],
    }
    assert http.post(f"{RBAC}/clusterroles", json=escalator, headers=ADMIN).status_code == 201
    bind(http, "kube-system", "ivan-escalates", "role-escalator", "ivan")
    ivan = {"Authorization": "Bearer ivan/system:authenticated"}
    everything = {
        "metadata": {"name": "everything"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    }
    roles = f"{RBAC}/namespaces/kube-system/roles"
    assert eventually(lambda: http.post(roles, json=everything, headers=ivan).status_code == 201)
    # escalate is per namespace: elsewhere ivan may not even create roles
    elsewhere = http.post(f"{RBAC}/namespaces/default/roles", json=everything, headers=ivan)
    assert elsewhere.status_code == 403


@pytest.mark.parametrize(
    ("path", "resource", "group"),
    [
        (
            "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies",
            "mutatingadmissionpolicies",
            "admissionregistration.k8s.io",
        ),
        (
            "/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicybindings",
            "mutatingadmissionpolicybindings",
            "admissionregistration.k8s.io",
        ),
    ],
)
def test_admission_policies_are_for_cluster_admins_only(
    http: httpx.Client, path: str, resource: str, group: str
) -> None:
    """A policy rewrites every write it matches: neither anonymous nor an unbound user may list or create
    one (kube's default roles grant admissionregistration.k8s.io to cluster-admin only); the admin may."""
    body = {"metadata": {"name": "p"}, "spec": {}}
    for headers, user in (({}, "system:anonymous"), (ALICE, "alice")):
        listed = http.get(path, headers=headers)
        assert listed.status_code == 403, listed.text
        assert listed.json()["message"] == (
            f'{resource}.{group} is forbidden: User "{user}" cannot list resource "{resource}" in API group '
            f'"{group}" at the cluster scope'
        )
        assert http.post(path, json=body, headers=headers).status_code == 403
    assert http.get(path, headers=ADMIN).status_code == 200
