"""Which writes a webhook's rules select (kube's webhook/predicates/rules tests: wildcards, subresources,
scope, operations) and how a webhook's answer is read and worded (ToStatusErr, VerifyAdmissionResponse)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.admission.interface import Attributes, Operation
from apiserver.authentication.user import UserInfo
from apiserver.machinery.scheme import ResourceType, VersionType
from builtin.admissionregistration.review import InvalidResponse, verify_response
from builtin.admissionregistration.rules import matched_version, rule_matches
from builtin.admissionregistration.webhook import denied

V1 = VersionType("v1", served=True, storage=True, schema={})
V2 = VersionType("v2", served=True, storage=False, schema={})
CRONTABS = ResourceType(
    group="stable.example.com", kind="CronTab", plural="crontabs", singular="crontab",
    list_kind="CronTabList", namespaced=True, versions=(V1, V2),
)  # fmt: skip


def write(
    subresource: str = "", namespace: str = "default", operation: Operation = Operation.CREATE
) -> Attributes:
    return Attributes(
        operation, CRONTABS, V1, namespace, "x", {}, None, UserInfo("u"), subresource=subresource
    )


def rule(**fields: Any) -> dict[str, Any]:
    return {
        "operations": ["CREATE"],
        "apiGroups": ["stable.example.com"],
        "apiVersions": ["v1"],
        "resources": ["crontabs"],
        **fields,
    }


@pytest.mark.parametrize(
    ("fields", "attributes", "selected"),
    [
        ({}, write(), True),
        ({"operations": ["UPDATE"]}, write(), False),
        ({"operations": ["*"]}, write(operation=Operation.DELETE), True),
        ({"apiGroups": ["*"]}, write(), True),
        ({"apiGroups": ["apps"]}, write(), False),
        ({"resources": ["*"]}, write(), True),
        ({"resources": ["*"]}, write("status"), False),
        ({"resources": ["crontabs"]}, write("status"), False),
        ({"resources": ["crontabs/status"]}, write("status"), True),
        ({"resources": ["crontabs/*"]}, write("status"), True),
        ({"resources": ["crontabs/*"]}, write(), False),
        ({"resources": ["*/status"]}, write("status"), True),
        ({"resources": ["*/*"]}, write("scale"), True),
        ({"scope": "Cluster"}, write(), False),
        ({"scope": "Namespaced"}, write(), True),
        ({"scope": "Namespaced"}, write(namespace=""), False),
    ],
)
def test_rules(fields: dict[str, Any], attributes: Attributes, selected: bool) -> None:
    assert rule_matches(rule(**fields), attributes, "v1") is selected


def test_equivalent_match_policy_picks_a_version_the_webhook_asks_for() -> None:
    rules = [rule(apiVersions=["v2"])]
    assert matched_version(rules, write(), V1, equivalent=True) is V2
    assert matched_version(rules, write(), V1, equivalent=False) is None


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
