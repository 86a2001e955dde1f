"""Which writes a rule of a webhook or policy selects (kube's staging/src/k8s.io/apiserver/pkg/admission/
plugin/webhook/predicates/rules/rules_test.go: wildcards, subresources, scope, operations) and how a webhook's answer is read and worded (ToStatusErr, VerifyAdmissionResponse)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.admission.interface import Attributes, Operation
from apiserver.authentication.user import UserInfo
from apiserver.machinery.scheme import ResourceType, VersionType
from builtin.admissionregistration.review import InvalidResponse, verify_response
from builtin.admissionregistration.rules import rule_matches
from builtin.admissionregistration.webhook import denied

V1 = VersionType("v1", served=True, storage=True, schema={})
CRONTABS = ResourceType(
    group="stable.example.com", kind="CronTab", plural="crontabs", singular="crontab",
    list_kind="CronTabList", namespaced=True, versions=(V1,),
)  # fmt: skip


def a(
    group: str, version: str, plural: str, subresource: str = "",
    operation: Operation = Operation.CREATE, namespace: str = "ns",
) -> tuple[Attributes, tuple[str, str, str]]:  # fmt: skip
    """kube's a(), namespacedAttributes() and clusterScopedAttributes(): a write and its resource."""
    attributes = Attributes(
        operation, CRONTABS, V1, namespace, "name", {}, None, UserInfo("u"), subresource=subresource
    )
    return attributes, (group, version, plural)


def cluster(group: str, version: str, plural: str, subresource: str = "") -> Any:
    return a(group, version, plural, subresource, namespace="")


EVERY = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}
ALL_OPERATIONS = [Operation.CREATE, Operation.UPDATE, Operation.DELETE, Operation.CONNECT]


def cases(name: str, fields: dict[str, Any], match: list[Any], no_match: list[Any]) -> list[Any]:
    return [
        pytest.param({**EVERY, **fields}, write, selected, id=f"{name}-{'match' if selected else 'no'}-{i}")
        for selected, writes in ((True, match), (False, no_match))
        for i, write in enumerate(writes)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "write", "selected"),
    [
        # TestGroup
        *cases("group wildcard", {"apiGroups": ["*"]}, [a("g", "v", "r")], []),
        *cases("group exact", {"apiGroups": ["g1", "g2"]}, [a("g1", "v", "r"), a("g2", "v2", "r3")], [a("g3", "v", "r"), a("g4", "v", "r")]),
        # TestVersion
        *cases("version wildcard", {"apiVersions": ["*"]}, [a("g", "v", "r")], []),
        *cases("version exact", {"apiVersions": ["v1", "v2"]}, [a("g1", "v1", "r"), a("g2", "v2", "r")], [a("g1", "v3", "r"), a("g2", "v4", "r")]),
        # TestOperation
        *cases("operation wildcard", {"operations": ["*"]}, [a("g", "v", "r", operation=o) for o in ALL_OPERATIONS], []),
        *[
            p
            for op in ALL_OPERATIONS
            for p in cases(f"operation {op.value}", {"operations": [op.value]}, [a("g", "v", "r", operation=op)], [a("g", "v", "r", operation=o) for o in ALL_OPERATIONS if o is not op])
        ],
        *cases("operations multiple", {"operations": ["UPDATE", "DELETE"]}, [a("g", "v", "r", operation=Operation.UPDATE), a("g", "v", "r", operation=Operation.DELETE)], [a("g", "v", "r"), a("g", "v", "r", operation=Operation.CONNECT)]),
        # TestResource
        *cases("no subresources", {"resources": ["*"]}, [a("g", "v", "r"), a("2", "v", "r2")], [a("g", "v", "r", "exec"), a("2", "v", "r2", "proxy")]),
        *cases("r & subresources", {"resources": ["r/*"]}, [a("g", "v", "r"), a("g", "v", "r", "exec")], [a("2", "v", "r2"), a("2", "v", "r2", "proxy")]),
        *cases("r & subresources or r2", {"resources": ["r/*", "r2"]}, [a("g", "v", "r"), a("g", "v", "r", "exec"), a("2", "v", "r2")], [a("2", "v", "r2", "proxy")]),
        *cases("proxy or exec", {"resources": ["*/proxy", "*/exec"]}, [a("g", "v", "r", "exec"), a("2", "v", "r2", "proxy"), a("2", "v", "r3", "proxy")], [a("g", "v", "r"), a("2", "v", "r2"), a("2", "v", "r4", "scale")]),
        *cases("everything", {"resources": ["*/*"]}, [a("g", "v", "r"), a("g", "v", "r", "status")], []),
        # TestScope
        *cases(
            "cluster scope", {"scope": "Cluster"},
            [cluster("g", "v", "r"), cluster("g", "v", "r", "exec"), cluster("", "v1", "namespaces"), cluster("", "v1", "namespaces", "finalize"), a("", "v1", "namespaces"), a("", "v1", "namespaces", "finalize")],
            [a("g", "v", "r"), a("g", "v", "r", "exec")],
        ),
        *cases(
            "namespace scope", {"scope": "Namespaced"},
            [a("g", "v", "r"), a("g", "v", "r", "exec")],
            [cluster("", "v1", "namespaces"), cluster("", "v1", "namespaces", "finalize"), a("", "v1", "namespaces"), a("", "v1", "namespaces", "finalize"), cluster("g", "v", "r"), cluster("g", "v", "r", "exec")],
        ),
        *cases(
            "all scopes", {"scope": "*"},
            [a("g", "v", "r"), a("g", "v", "r", "exec"), cluster("g", "v", "r"), cluster("g", "v", "r", "exec"), cluster("", "v1", "namespaces"), a("", "v1", "namespaces", "finalize")],
            [],
        ),
    ],
)  # fmt: skip
def test_rules(rule: dict[str, Any], write: Any, selected: bool) -> None:
    """kube's rules_test.go (TestGroup, TestVersion, TestOperation, TestResource, TestScope): each case
    here judges the whole rule, its other fields ``*``."""
    attributes, gvr = write
    assert rule_matches(rule, attributes, gvr) is selected


def test_denial_is_worded_as_kube_and_never_below_400() -> None:
    error = denied("x.example.com", {"code": 200, "message": "no"})
    assert (error.code, error.message) == (
        400,
        'admission webhook "x.example.com" denied the request: no',
    )
    error = denied("x.example.com", {"reason": "Gone fishing", "code": 409})
    assert (error.code, error.message) == (
        409, 'admission webhook "x.example.com" denied the request: Gone fishing'
    )  # fmt: skip


def review(**response: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "u1", "allowed": True, **response},
    }


@pytest.mark.parametrize(
    ("answer", "mutating", "problem"),
    [
        (
            {"apiVersion": "v1", "kind": "Status"},
            False,
            "expected webhook response of admission.k8s.io/v1",
        ),
        (review(uid="u2"), False, 'expected response.uid="u1", got "u2"'),
        (review(allowed="yes"), False, "response.allowed must be a boolean"),
        (review(patch="W10=", patchType="JSONPatch"), False, "validating webhook may not return"),
        (review(patch="W10=", patchType="Merge"), True, 'patchType must be "JSONPatch"'),
        ([1, 2], False, "expected an AdmissionReview object"),
    ],
)
def test_invalid_responses(answer: Any, mutating: bool, problem: str) -> None:
    with pytest.raises(InvalidResponse, match=problem.replace("(", r"\(")):
        verify_response(answer, "u1", mutating)


def test_valid_response() -> None:
    verdict = verify_response(
        review(
            warnings=[" w ", ""], auditAnnotations={"k": "v"}, patch="W10=", patchType="JSONPatch"
        ),
        "u1",
        mutating=True,
    )
    assert (verdict.allowed, verdict.warnings, verdict.audit_annotations, verdict.patch) == (
        True, ["w"], {"k": "v"}, "W10="
    )  # fmt: skip
