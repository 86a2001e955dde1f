"""The audit policy's rule matching, as kube's checker decides it: the cases of k8s.io/apiserver
pkg/audit/policy/checker_test.go (TestChecker, TestCheckerPolicyOmitStages, TestOmitManagedFields), each a
request, the rules in order, and the level and stages the first matching rule gives."""

from __future__ import annotations

import pytest

from apiserver.audit.event import Level, Stage
from apiserver.audit.policy import AuditConfig, GroupResources, PolicyRule, RulePolicy
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes

TIM = UserInfo("tim@k8s.io", groups=("humans", "developers"))
RBAC = "rbac.authorization.k8s.io"
REQUESTS = {
    "namespaced": Attributes(TIM, "get", True, "default", "", "v1", "pods", "", "busybox"),
    "cluster": Attributes(TIM, "get", True, "", RBAC, "v1beta1", "clusterroles", "", "edit"),
    "nonResource": Attributes(TIM, "get", False, path="/logs/kubelet.log"),
    "subresource": Attributes(TIM, "get", True, "default", "", "v1", "pods", "log", "busybox"),
    "Unauthorized": Attributes(
        UserInfo(""), "get", True, "default", "", "v1", "pods", "", "busybox"
    ),
}


def pods(*resources: str) -> tuple[GroupResources, ...]:
    return (GroupResources("", resources),)


RULES = {
    "default": PolicyRule(Level.METADATA),
    "create": PolicyRule(Level.REQUEST, verbs=frozenset({"create"})),
    "tims": PolicyRule(Level.METADATA, users=frozenset({"tim@k8s.io"})),
    "humans": PolicyRule(Level.METADATA, user_groups=frozenset({"humans"})),
    "serviceAccounts": PolicyRule(Level.REQUEST, user_groups=frozenset({"system:serviceaccounts"})),
    "getPods": PolicyRule(Level.REQUEST_RESPONSE, verbs=frozenset({"get"}), resources=pods("pods")),
    "getPodLogs": PolicyRule(Level.REQUEST, verbs=frozenset({"get"}), resources=pods("pods/log")),
    "getPodWildcardMatching": PolicyRule(
        Level.REQUEST, verbs=frozenset({"get"}), resources=pods("*")
    ),
    "getPodResourceWildcardMatching": PolicyRule(
        Level.REQUEST, verbs=frozenset({"get"}), resources=pods("*/log")
    ),
    "getPodSubResourceWildcardMatching": PolicyRule(
        Level.REQUEST, verbs=frozenset({"get"}), resources=pods("pods/*")
    ),
    "getClusterRoles": PolicyRule(
        Level.REQUEST_RESPONSE,
        verbs=frozenset({"get"}),
        resources=(GroupResources(RBAC, ("clusterroles",)),),
        namespaces=frozenset({""}),
    ),
    "getLogs": PolicyRule(
        Level.REQUEST_RESPONSE, verbs=frozenset({"get"}), non_resource_urls=("/logs*",)
    ),
    "getMetrics": PolicyRule(
        Level.REQUEST, verbs=frozenset({"get"}), non_resource_urls=("/metrics",)
    ),
    "clusterRoleEdit": PolicyRule(
        Level.REQUEST, resources=(GroupResources(RBAC, ("clusterroles",), ("edit",)),)
    ),
    "omit RequestReceived": PolicyRule(
        Level.REQUEST, omit_stages=frozenset({Stage.REQUEST_RECEIVED})
    ),
    "only audit panic": PolicyRule(
        Level.REQUEST,
        omit_stages=frozenset(
            {Stage.REQUEST_RECEIVED, Stage.RESPONSE_STARTED, Stage.RESPONSE_COMPLETE}
        ),
    ),
}

N, M, R, RR = Level.NONE, Level.METADATA, Level.REQUEST, Level.REQUEST_RESPONSE
# kube's testAuditLevel: (request, expected level, rules in order)
LEVELS = [
    ("namespaced", M, "default"),
    ("namespaced", N, "create"),
    ("namespaced", M, "tims"),
    ("namespaced", M, "humans"),
    ("namespaced", N, "serviceAccounts"),
    ("namespaced", RR, "getPods"),
    ("namespaced", N, "getClusterRoles"),
    ("namespaced", N, "getLogs"),
    ("namespaced", N, "getMetrics"),
    ("namespaced", M, "getMetrics", "serviceAccounts", "default"),
    ("namespaced", RR, "getMetrics", "getPods", "default"),
    ("namespaced", RR, "getPodLogs", "getPods"),
    ("cluster", M, "default"),
    ("cluster", N, "create"),
    ("cluster", M, "tims"),
    ("cluster", M, "humans"),
    ("cluster", N, "serviceAccounts"),
    ("cluster", N, "getPods"),
    ("cluster", RR, "getClusterRoles"),
    ("cluster", R, "clusterRoleEdit", "getClusterRoles"),
    ("cluster", N, "getLogs"),
    ("cluster", N, "getMetrics"),
    ("cluster", M, "getMetrics", "serviceAccounts", "default"),
    ("cluster", RR, "getMetrics", "getClusterRoles", "default"),
    ("cluster", N, "getPodLogs", "getPods"),
    ("nonResource", M, "default"),
    ("nonResource", N, "create"),
    ("nonResource", M, "tims"),
    ("nonResource", M, "humans"),
    ("nonResource", N, "serviceAccounts"),
    ("nonResource", N, "getPods"),
    ("nonResource", N, "getClusterRoles"),
    ("nonResource", RR, "getLogs"),
    ("nonResource", N, "getMetrics"),
    ("nonResource", M, "getMetrics", "serviceAccounts", "default"),
    ("nonResource", RR, "getLogs", "getClusterRoles", "default"),
    ("nonResource", N, "getPodLogs", "getPods"),
    ("subresource", R, "getPodLogs", "getPods"),
    ("subresource", R, "getPodWildcardMatching"),
    ("subresource", R, "getPodResourceWildcardMatching"),
    ("subresource", R, "getPodSubResourceWildcardMatching"),
    ("Unauthorized", N, "tims"),
    ("Unauthorized", M, "tims", "default"),
    ("Unauthorized", N, "humans"),
    ("Unauthorized", M, "humans", "default"),
]
POLICY_STAGES = [frozenset(), frozenset({Stage.REQUEST_RECEIVED, Stage.RESPONSE_STARTED})]


def evaluate(request: str, rules: tuple[str, ...], policy_stages: frozenset[Stage]) -> AuditConfig:
    policy = RulePolicy(tuple(RULES[name] for name in rules), policy_stages)
    return policy.evaluate(REQUESTS[request])


@pytest.mark.parametrize("policy_stages", POLICY_STAGES, ids=["no-policy-stages", "policy-stages"])
@pytest.mark.parametrize(("request_name", "level", "rules"), [(c[0], c[1], c[2:]) for c in LEVELS])
def test_checker_levels(
    request_name: str, level: Level, rules: tuple[str, ...], policy_stages: frozenset[Stage]
) -> None:
    config = evaluate(request_name, rules, policy_stages)
    assert (config.level, config.omit_stages) == (level, policy_stages)


PANIC_ONLY = frozenset({Stage.REQUEST_RECEIVED, Stage.RESPONSE_STARTED, Stage.RESPONSE_COMPLETE})


@pytest.mark.parametrize("request_name", ["namespaced", "cluster", "nonResource"])
def test_a_rule_s_omitted_stages_join_the_policy_s(request_name: str) -> None:
    first = ("omit RequestReceived", "getPods", "default")
    assert evaluate(request_name, first, frozenset()) == AuditConfig(
        R, frozenset({Stage.REQUEST_RECEIVED})
    )
    assert evaluate(request_name, first, POLICY_STAGES[1]) == AuditConfig(R, POLICY_STAGES[1])
    panic = ("only audit panic", "getPods", "default")
    assert evaluate(request_name, panic, frozenset()) == AuditConfig(R, PANIC_ONLY)
    assert evaluate(request_name, panic, POLICY_STAGES[1]) == AuditConfig(R, PANIC_ONLY)


def test_an_unmatched_request_keeps_the_policy_s_stages() -> None:
    config = evaluate("nonResource", ("getPods",), POLICY_STAGES[1])
    assert config == AuditConfig(N, POLICY_STAGES[1])


@pytest.mark.parametrize(
    ("policy_wide", "per_rule", "omitted"),
    [(False, None, False), (True, None, True), (True, False, False), (False, True, True)],
)
def test_omit_managed_fields_per_rule_overrides_the_policy(
    policy_wide: bool, per_rule: bool | None, omitted: bool
) -> None:
    rule = PolicyRule(RR, verbs=frozenset({"get"}), omit_managed_fields=per_rule)
    policy = RulePolicy((rule,), omit_managed_fields=policy_wide)
    assert policy.evaluate(Attributes(TIM, "get", False)).omit_managed_fields is omitted


@pytest.mark.parametrize(
    ("spec", "resource", "subresource", "matched"),
    [
        (
            "pods/*",
            "pods",
            "",
            True,
        ),  # TrimRight("pods/*", "/*") is "pods": the resource itself too
        ("pods/*", "pods", "status", True),
        ("pods/*", "nodes", "status", False),
        ("*/status", "deployments", "status", True),
        ("*/status", "deployments", "", False),
        ("*/status", "deployments", "scale", False),
        ("pods/log", "pods", "", False),
        ("pods", "pods", "log", False),  # a subresource is named with its resource
    ],
)
def test_resource_wildcards(spec: str, resource: str, subresource: str, matched: bool) -> None:
    rule = PolicyRule(M, resources=pods(spec))
    request = Attributes(TIM, "get", True, "default", "", "v1", resource, subresource, "x")
    assert rule.matches(request) is matched


def test_resource_names_and_namespaces() -> None:
    named = PolicyRule(M, resources=(GroupResources("", ("secrets",), ("token",)),))
    secret = Attributes(TIM, "get", True, "kube-system", "", "v1", "secrets", "", "token")
    assert named.matches(secret)
    assert not named.matches(secret._replace(name="other"))
    assert not named.matches(secret._replace(api_group="apps"))
    in_namespace = PolicyRule(M, namespaces=frozenset({"kube-system"}))
    assert in_namespace.matches(secret)
    assert not in_namespace.matches(secret._replace(namespace="default"))
    assert not in_namespace.matches(REQUESTS["nonResource"])
    any_core = PolicyRule(
        M, resources=(GroupResources(""),)
    )  # a group without resources: all of it
    assert any_core.matches(secret)
    assert not any_core.matches(REQUESTS["cluster"])


@pytest.mark.parametrize(
    ("spec", "path", "matched"),
    [
        ("*", "/healthz", True),
        ("/healthz", "/healthz", True),
        ("/healthz", "/healthz/ping", False),
        ("/healthz*", "/healthz/ping", True),
        ("/healthz/*", "/healthz", False),
    ],
)
def test_non_resource_urls(spec: str, path: str, matched: bool) -> None:
    rule = PolicyRule(M, non_resource_urls=(spec,))
    assert rule.matches(Attributes(TIM, "get", False, path=path)) is matched
    assert not rule.matches(REQUESTS["namespaced"])
