"""Rule matching and coverage, table-driven from kube's plugin/pkg/auth/authorizer/rbac/rbac_test.go
(TestRuleMatches) and pkg/registry/rbac/validation/policy_comparator_test.go (Covers)."""

from __future__ import annotations

import pytest

from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes
from builtin.rbac.rules import Rule, compact, uncovered

USER = UserInfo("u")


def resource(verb: str, group: str, res: str, sub: str = "", name: str = "") -> Attributes:
    return Attributes(USER, verb, True, "ns", group, "v1", res, sub, name)


def url(verb: str, path: str) -> Attributes:
    return Attributes(USER, verb, False, path=path)


def rule(
    verbs: str, groups: str = "", resources: str = "", names: str = "", urls: str = ""
) -> Rule:
    def split(text: str) -> tuple[str, ...]:
        return tuple(text.split()) if text else ()

    return Rule(
        split(verbs),
        split(groups) if groups != "core" else ("",),
        split(resources),
        split(names),
        split(urls),
    )


MATRIX = [
    # star verb, exact match other
    (rule("*", "group1", "resource1"), resource("verb1", "group1", "resource1"), True),
    (rule("*", "group1", "resource1"), resource("verb1", "group2", "resource1"), False),
    (rule("*", "group1", "resource1"), resource("verb1", "group1", "resource2"), False),
    (rule("*", "group1", "resource1"), resource("verb2", "group1", "resource1"), True),
    # star group, exact match other
    (rule("verb1", "*", "resource1"), resource("verb1", "group1", "resource1"), True),
    (rule("verb1", "*", "resource1"), resource("verb1", "group2", "resource1"), True),
    (rule("verb1", "*", "resource1"), resource("verb1", "group1", "resource2"), False),
    (rule("verb1", "*", "resource1"), resource("verb2", "group1", "resource1"), False),
    # star resource, exact match other
    (rule("verb1", "group1", "*"), resource("verb1", "group1", "resource1"), True),
    (rule("verb1", "group1", "*"), resource("verb1", "group1", "resource2"), True),
    (rule("verb1", "group1", "*"), resource("verb1", "group2", "resource1"), False),
    (rule("verb1", "group1", "*"), resource("verb1", "group1", "resource1", "sub"), True),
    # tuple expansion
    (
        rule("verb1 verb2", "group1 group2", "resource1 resource2"),
        resource("verb2", "group2", "resource2"),
        True,
    ),
    (
        rule("verb1 verb2", "group1 group2", "resource1 resource2"),
        resource("verb3", "group1", "resource1"),
        False,
    ),
    # subresource expansion
    (
        rule("*", "*", "resource1/subresource1"),
        resource("verb1", "group1", "resource1", "subresource1"),
        True,
    ),
    (
        rule("*", "*", "resource1/subresource1"),
        resource("verb1", "group1", "resource1", "subresource2"),
        False,
    ),
    (
        rule("*", "*", "resource1/subresource1"),
        resource("verb1", "group1", "resource2", "subresource1"),
        False,
    ),
    (rule("*", "*", "resource1/subresource1"), resource("verb1", "group1", "resource1"), False),
    # */subresource
    (rule("*", "*", "*/status"), resource("get", "apps", "deployments", "status"), True),
    (rule("*", "*", "*/status"), resource("get", "apps", "deployments"), False),
    (rule("*", "*", "*/status"), resource("get", "apps", "deployments", "scale"), False),
    (rule("*", "*", "*/status"), resource("get", "apps", "status"), False),
    # the resource alone does not grant its subresources
    (rule("get", "core", "pods"), resource("get", "", "pods", "log"), False),
    # resourceNames
    (rule("get", "core", "configmaps", "a b"), resource("get", "", "configmaps", name="a"), True),
    (rule("get", "core", "configmaps", "a b"), resource("get", "", "configmaps", name="c"), False),
    (rule("get", "core", "configmaps", "a b"), resource("list", "", "configmaps"), False),
    (rule("get", "core", "configmaps"), resource("get", "", "configmaps", name="c"), True),
    # star nonresource
    (rule("verb1", urls="*"), url("verb1", "/foo"), True),
    (rule("verb1", urls="*"), url("verb1", "/foo/bar/one"), True),
    (rule("verb1", urls="*"), url("verb2", "/foo"), False),
    # star nonresource subpath
    (rule("verb1", urls="/foo/*"), url("verb1", "/foo"), False),
    (rule("verb1", urls="/foo/*"), url("verb1", "/foo/bar"), True),
    (rule("verb1", urls="/foo/*"), url("verb1", "/foo/bar/one"), True),
    (rule("verb1", urls="/foo/*"), url("verb1", "/notfoo"), False),
    (rule("verb1", urls="/foo/*"), url("verb1", "/notfoo/bar"), False),
    (rule("verb1", urls="/foo/*"), url("verb2", "/foo/bar"), False),
    # star verb, exact nonresource
    (rule("*", urls="/foo /foo/bar/one"), url("verb1", "/foo"), True),
    (rule("*", urls="/foo /foo/bar/one"), url("verb2", "/foo/bar"), False),
    (rule("*", urls="/foo /foo/bar/one"), url("verb1", "/foo/bar/one"), True),
    (rule("*", urls="/foo /foo/bar/one"), url("verb1", "/foo/baz/one"), False),
    # a resource rule never grants a path, nor a URL rule a resource
    (rule("*", "*", "*"), url("get", "/healthz"), False),
    (rule("*", urls="*"), resource("get", "", "pods"), False),
]


@pytest.mark.parametrize(("policy", "request_attributes", "allowed"), MATRIX)
def test_rule_allows_as_kubes_rule_allows(
    policy: Rule, request_attributes: Attributes, allowed: bool
) -> None:
    assert policy.allows(request_attributes) is allowed


COVERS = [
    # owner rules, granted rules, what is not covered
    ([rule("get", "core", "pods")], [rule("get", "core", "pods")], []),
    ([rule("*", "*", "*")], [rule("get list", "apps", "deployments", "x")], []),
    (
        [rule("get", "core", "pods")],
        [rule("get list", "core", "pods")],
        [rule("list", "core", "pods")],
    ),
    (
        [rule("get", "core", "pods", "a")],
        [rule("get", "core", "pods")],
        [rule("get", "core", "pods")],
    ),
    ([rule("get", "core", "pods", "a b")], [rule("get", "core", "pods", "a")], []),
    ([rule("get", "core", "*/status")], [rule("get", "core", "pods/status")], []),
    (
        [rule("get", "core", "*/status")],
        [rule("get", "core", "pods")],
        [rule("get", "core", "pods")],
    ),
    ([rule("get", urls="/foo/*")], [rule("get", urls="/foo/bar")], []),
    ([rule("get", urls="/foo/*")], [rule("get", urls="/foo")], [rule("get", urls="/foo")]),
    ([rule("*", urls="*")], [rule("get post", urls="/anything")], []),
    # rights split across rules still cover
    (
        [rule("get", "core", "pods"), rule("list", "core", "pods")],
        [rule("get list", "core", "pods")],
        [],
    ),
]


@pytest.mark.parametrize(("owned", "granted", "missing"), COVERS)
def test_coverage_breaks_rules_down_as_kubes_covers(
    owned: list[Rule], granted: list[Rule], missing: list[Rule]
) -> None:
    assert uncovered(owned, granted) == missing


def test_compact_merges_verbs_and_prints_as_kubes_compact_string() -> None:
    atoms = uncovered([], [rule("get list", "core", "nodes"), rule("get", urls="/metrics")])
    assert sorted(r.compact_string() for r in compact(atoms)) == [
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]


def test_malformed_stored_rules_match_nothing() -> None:
    assert Rule.from_json("not a rule") == Rule()
    assert Rule.from_json({"verbs": "get", "apiGroups": [1, ""]}) == Rule((), ("",))
    assert not Rule.from_json({"verbs": "*"}).allows(resource("get", "", "pods"))
