"""The one matcher of policies, policy bindings and webhooks (builtin/admissionregistration/matching.py) over
kube's own test cases: TestMatcher of staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/matching/
matching_test.go (resource rules, exclusions, resourceNames, matchPolicy Exact and Equivalent across versions
and groups, selector errors only for writes the rules select), TestGetNamespaceLabels and
TestNotExemptClusterScopedResource of webhook/predicates/namespace/matcher_test.go, TestObjectSelector of
webhook/predicates/object/matcher_test.go, and the binding shapes of kube's documentation (selectors only,
``{}``): unset resourceRules select every resource for MatchResources, none for a webhook."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from apiserver.admission.interface import Attributes, Operation
from apiserver.authentication.user import UserInfo
from apiserver.machinery import errors
from apiserver.machinery.scheme import ResourceType, VersionType
from builtin.admissionregistration.equivalents import Matched
from builtin.admissionregistration.matching import MATCH_RESOURCES, WEBHOOK, Matcher, Shape


def versions(*names: str) -> tuple[VersionType, ...]:
    return tuple(
        VersionType(n, served=True, storage=i == 0, schema={}) for i, n in enumerate(names)
    )


def resource(group: str, plural: str, *names: str, **fields: Any) -> ResourceType:
    kind = fields.pop("kind", plural[:-1].capitalize())
    return ResourceType(
        group=group, kind=kind, plural=plural, singular=plural[:-1], list_kind=f"{kind}List",
        namespaced=fields.pop("namespaced", True), versions=versions(*names), **fields,
    )  # fmt: skip


# kube's test mapper co-locates deployments of apps and extensions (one storage): here, as apiforge says it
APPS = resource("apps", "deployments", "v1", "v1beta1", "v1alpha1")
EXTENSIONS = resource("extensions", "deployments", "v1beta1", stored_as=("apps", "deployments"))
PODS = resource("example.apiserver.k8s.io", "pods", "v1")
NAMESPACES = resource("", "namespaces", "v1", namespaced=False)
NODES = resource("", "nodes", "v1", namespaced=False)
POLICIES = resource(
    "admissionregistration.k8s.io",
    "validatingadmissionpolicies",
    "v1",
    kind="ValidatingAdmissionPolicy",
)
KNOWN = (APPS, EXTENSIONS, PODS, NAMESPACES, NODES)
LABELS = {"1": {"runlevel": "1"}, "ns": {"env": "prod"}}


@dataclass
class Namespaces:
    """The namespaces store, as the matcher reads it."""

    async def get_rendered(self, namespace: str | None, name: str) -> tuple[Any, Any]:
        if name not in LABELS:
            raise errors.not_found("namespaces", "", name)
        return {"metadata": {"name": name, "labels": LABELS[name]}}, None


class Context:
    def __init__(self) -> None:
        self.stores = {(r.group, r.plural): SimpleNamespace(resource=r) for r in KNOWN}

    def store(self, group: str, plural: str) -> Namespaces:
        assert (group, plural) == ("", "namespaces")
        return Namespaces()


def write(
    on: ResourceType = APPS, version: str = "v1", subresource: str = "", namespace: str = "ns",
    name: str = "name", operation: Operation = Operation.CREATE, obj: Any = None, old: Any = None,
) -> Attributes:  # fmt: skip
    written = on.version(version)
    assert written is not None
    return Attributes(
        operation, on, written, namespace, name, obj, old, UserInfo("u"), subresource=subresource
    )


def rule(group: str, version: str, *resources: str, **fields: Any) -> dict[str, Any]:
    return {
        "operations": ["*"],
        "apiGroups": [group],
        "apiVersions": [version],
        "resources": list(resources),
        "scope": "*",
        **fields,
    }


def matches(
    criteria: dict[str, Any], attributes: Attributes, shape: Shape = MATCH_RESOURCES
) -> Any:
    matcher = Matcher(Context(), shape)  # type: ignore[arg-type]
    return asyncio.run(matcher.matches(criteria, attributes))


def where(found: Matched | None) -> tuple[str, str] | None:
    return None if found is None else (found.resource.group, found.version.name)


ALL = rule("*", "*", "*")
DEPLOYMENT_RULES = [
    rule("extensions", "v1beta1", "deployments", "deployments/scale"),
    rule("apps", "v1beta1", "deployments", "deployments/scale"),
]
EXCLUDE_EXTENSIONS = [rule("extensions", "v1beta1", "deployments")]


@pytest.mark.parametrize(
    ("criteria", "attributes", "expected"),
    [
        pytest.param({"resourceRules": [ALL]}, write(), ("apps", "v1"), id="wildcard rule, match as requested"),
        pytest.param(
            {"resourceRules": [rule("extensions", "v1", "deployments"), rule("apps", "v1beta1", "deployments"), rule("apps", "v1", "deployments")]},
            write(), ("apps", "v1"), id="specific rules, prefer exact match",
        ),
        pytest.param(
            {"resourceRules": DEPLOYMENT_RULES, "matchPolicy": "Exact"}, write(), None,
            id="specific rules, exact match miss",
        ),
        pytest.param(
            {"resourceRules": DEPLOYMENT_RULES, "matchPolicy": "Equivalent"}, write(), ("extensions", "v1beta1"),
            id="specific rules, equivalent match, prefer extensions",
        ),
        pytest.param(
            {"resourceRules": DEPLOYMENT_RULES[::-1]}, write(), ("apps", "v1beta1"),
            id="specific rules, equivalent match, prefer apps (Equivalent is the default)",
        ),
        pytest.param(
            {"resourceRules": [*DEPLOYMENT_RULES, rule("apps", "v1", "deployments", "deployments/scale")]},
            write(subresource="scale"), ("apps", "v1"), id="specific rules, subresource prefer exact match",
        ),
        pytest.param(
            {"resourceRules": DEPLOYMENT_RULES, "matchPolicy": "Exact"}, write(subresource="scale"), None,
            id="specific rules, subresource exact match miss",
        ),
        pytest.param(
            {"resourceRules": DEPLOYMENT_RULES}, write(subresource="scale"), ("extensions", "v1beta1"),
            id="specific rules, subresource equivalent match, prefer extensions",
        ),
        pytest.param(
            {"resourceRules": DEPLOYMENT_RULES[::-1]}, write(subresource="scale"), ("apps", "v1beta1"),
            id="specific rules, subresource equivalent match, prefer apps",
        ),
        pytest.param(
            {"resourceRules": [rule("apps", "v1", "deployments", resourceNames=["name"])]}, write(), ("apps", "v1"),
            id="specific rules, prefer exact match and name match",
        ),
        pytest.param(
            {"resourceRules": [rule("apps", "v1", "deployments", resourceNames=["wrong-name"])]}, write(), None,
            id="specific rules, prefer exact match and name match miss",
        ),
        pytest.param(
            {"resourceRules": [rule("apps", "v1", "deployments", "deployments/scale", resourceNames=["name"])]},
            write(EXTENSIONS, "v1beta1", "scale"), ("apps", "v1"),
            id="specific rules, subresource equivalent match, prefer extensions and name match",
        ),
        pytest.param(
            {"resourceRules": [rule("apps", "v1", "deployments", "deployments/scale", resourceNames=["wrong-name"])]},
            write(EXTENSIONS, "v1beta1", "scale"), None,
            id="specific rules, subresource equivalent match, prefer extensions and name match miss",
        ),
        pytest.param(
            {"resourceRules": [ALL], "excludeResourceRules": EXCLUDE_EXTENSIONS, "matchPolicy": "Exact"},
            write(), ("apps", "v1"), id="exclude resource match on miss",
        ),
        pytest.param(
            {"resourceRules": [ALL], "excludeResourceRules": EXCLUDE_EXTENSIONS},
            write(EXTENSIONS, "v1beta1"), None, id="exclude resource miss on match",
        ),
        pytest.param(
            {"resourceRules": [ALL], "excludeResourceRules": [rule("apps", "v1", "deployments", resourceNames=["name"])]},
            write(), None, id="exclude resource with name match",
        ),
        pytest.param(
            {"resourceRules": [ALL], "excludeResourceRules": [rule("apps", "v1", "deployments", resourceNames=["other-name"])]},
            write(), ("apps", "v1"), id="exclude resource with name miss",
        ),
        pytest.param(
            {"resourceRules": [ALL], "excludeResourceRules": EXCLUDE_EXTENSIONS, "matchPolicy": "Equivalent"},
            write(), None, id="exclude equivalent resource match",
        ),
        pytest.param(
            {"resourceRules": [ALL], "excludeResourceRules": [rule("extensions", "v1beta1", "deployments", resourceNames=["other-name"])], "matchPolicy": "Equivalent"},
            write(), ("apps", "v1"), id="exclude equivalent resource with name miss",
        ),
        pytest.param(
            {"excludeResourceRules": EXCLUDE_EXTENSIONS, "matchPolicy": "Exact"}, write(), ("apps", "v1"),
            id="treat empty ResourceRules as match",
        ),
        pytest.param({"resourceRules": [{}]}, write(), None, id="treat non-empty ResourceRules as no match"),
        pytest.param(
            {"resourceRules": [rule("*", "*", "deployments")], "namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}},
            write(PODS), None, id="erroring namespace selector on otherwise non-matching rule doesn't error",
        ),
        pytest.param(
            {"resourceRules": [rule("*", "*", "pods")], "namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}},
            write(PODS), 500, id="erroring namespace selector on otherwise matching rule errors",
        ),
        pytest.param(
            {"resourceRules": [rule("*", "*", "deployments")], "objectSelector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}},
            write(PODS), None, id="erroring object selector on otherwise non-matching rule doesn't error",
        ),
        pytest.param(
            {"resourceRules": [rule("*", "*", "pods")], "objectSelector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}},
            write(PODS), 500, id="erroring object selector on otherwise matching rule errors",
        ),
    ],
)  # fmt: skip
def test_kube_matcher_cases(
    criteria: dict[str, Any], attributes: Attributes, expected: Any
) -> None:
    if isinstance(expected, int):
        with pytest.raises(errors.APIError) as raised:
            matches(criteria, attributes)
        assert raised.value.code == expected
    else:
        assert where(matches(criteria, attributes)) == expected


PROD = {"matchLabels": {"env": "prod"}}


@pytest.mark.parametrize(
    ("criteria", "attributes", "policy", "webhook"),
    [
        pytest.param({"namespaceSelector": PROD}, write(), True, False, id="namespaceSelector only, in prod"),
        pytest.param({"namespaceSelector": PROD}, write(namespace="1"), False, False, id="namespaceSelector only, elsewhere"),
        pytest.param({"namespaceSelector": PROD}, write(NODES, namespace=""), True, False, id="namespaceSelector only, cluster-scoped"),
        pytest.param({"objectSelector": PROD}, write(obj={"metadata": {"labels": {"env": "prod"}}}), True, False, id="objectSelector only"),
        pytest.param({"objectSelector": PROD}, write(obj={"metadata": {}}), False, False, id="objectSelector only, unlabelled"),
        pytest.param({}, write(), True, False, id="empty"),
        pytest.param({"resourceRules": []}, write(), True, False, id="empty resourceRules"),
        pytest.param({"rules": [ALL]}, write(), True, True, id="a webhook's rules"),
        pytest.param({"resourceRules": [ALL]}, write(POLICIES, namespace=""), False, False, id="admission configuration is exempt"),
    ],
)  # fmt: skip
def test_unset_rules(
    criteria: dict[str, Any], attributes: Attributes, policy: bool, webhook: bool
) -> None:
    """kube's BindingMatches and Matches: an unset resourceRules narrows nothing; a webhook's ``rules``
    select only what they name (ShouldCallHook)."""
    assert (matches(criteria, attributes) is not None) is policy
    assert (matches(criteria, attributes, WEBHOOK) is not None) is webhook


NAMESPACE_2 = {"metadata": {"name": "2", "labels": {"runlevel": "2"}}}
RUNLEVEL_2 = {"namespaceSelector": {"matchLabels": {"runlevel": "2"}}}
RUNLEVEL_1 = {"namespaceSelector": {"matchLabels": {"runlevel": "1"}}}


@pytest.mark.parametrize(
    ("criteria", "attributes"),
    [
        pytest.param(RUNLEVEL_2, write(NAMESPACES, namespace="", name="2", obj=NAMESPACE_2), id="creating namespace: the object's labels"),
        pytest.param(RUNLEVEL_2, write(NAMESPACES, namespace="", name="2", obj=NAMESPACE_2, operation=Operation.UPDATE), id="updating namespace: the new object's"),
        pytest.param(RUNLEVEL_1, write(NAMESPACES, namespace="", name="1", old=NAMESPACE_2, operation=Operation.DELETE), id="deleting namespace: the stored one's"),
        pytest.param(RUNLEVEL_1, write(NAMESPACES, namespace="", name="1", subresource="finalize", operation=Operation.UPDATE), id="namespace/finalize: the stored one's"),
        pytest.param(RUNLEVEL_1, write(PODS, namespace="1"), id="pod: its namespace's"),
        pytest.param({"namespaceSelector": {"matchLabels": {"nothing": "matches"}}}, write(NODES, namespace=""), id="cluster-scoped resources are not exempted"),
    ],
)  # fmt: skip
def test_namespace_labels(criteria: dict[str, Any], attributes: Attributes) -> None:
    every = rule("*", "*", "*/*")
    assert matches({**criteria, "resourceRules": [every]}, attributes) is not None
    assert matches({**criteria, "rules": [every]}, attributes, WEBHOOK) is not None
    other = {"namespaceSelector": {"matchLabels": {"runlevel": "3"}}, "resourceRules": [every]}
    assert matches(other, attributes) is None or attributes.resource is NODES


def test_namespace_not_found_is_kube_404_only_when_rules_match() -> None:
    criteria = {"namespaceSelector": PROD, "resourceRules": [rule("apps", "*", "deployments")]}
    with pytest.raises(errors.APIError) as raised:
        matches(criteria, write(namespace="gone"))
    assert (raised.value.code, raised.value.message) == (404, 'namespaces "gone" not found')
    assert matches(criteria, write(PODS, namespace="gone")) is None


NODE_1 = {"metadata": {"labels": {"runlevel": "1"}}}
NODE_2 = {"metadata": {"labels": {"runlevel": "2"}}}
NOT_1 = {"matchExpressions": [{"key": "runlevel", "operator": "NotIn", "values": ["1"]}]}


@pytest.mark.parametrize(
    ("selector", "attributes", "called"),
    [
        pytest.param({}, write(NODES, namespace=""), True, id="empty object selector matches everything"),
        pytest.param(NOT_1, write(NODES, namespace="", obj=NODE_2), True, id="matches new object"),
        pytest.param(NOT_1, write(NODES, namespace="", old=NODE_2, operation=Operation.DELETE), True, id="matches old object"),
        pytest.param(NOT_1, write(NODES, namespace="", obj=NODE_1), False, id="does not match new object"),
        pytest.param(NOT_1, write(NODES, namespace="", old=NODE_1), False, id="does not match old object"),
        pytest.param(NOT_1, write(NODES, namespace="", obj=NODE_1, old=NODE_2, operation=Operation.UPDATE), True, id="either object is enough"),
    ],
)  # fmt: skip
def test_object_selector(selector: dict[str, Any], attributes: Attributes, called: bool) -> None:
    hook = {"objectSelector": selector, "rules": [ALL]}
    assert (matches(hook, attributes, WEBHOOK) is not None) is called


def test_matched_view_converts_between_equivalent_resources() -> None:
    """The object a policy sees under an equivalent match is the matched resource's (here, both resources
    keep the same stored form, so only the copy and the round trip are observable)."""
    obj = {"apiVersion": "apps/v1", "metadata": {"name": "x"}}
    matched = Matched(EXTENSIONS, EXTENSIONS.versions[0])
    seen = matched.view(obj, APPS, APPS.versions[0])
    assert seen == obj and seen is not obj
    assert matched.back(seen, APPS, APPS.versions[0]) == obj
