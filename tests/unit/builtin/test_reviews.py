"""The access reviews are answered by the server's authorizer for the writer's user (kube's
selfsubjectaccessreview / selfsubjectrulesreview / selfsubjectreview REST storage), through the same Store
path as any create of the generated review kinds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import AlwaysAllow, Attributes, Decision, Rules
from apiserver.machinery import errors
from apiserver.registry.admit import WriteOptions
from apiserver.server.app import APIServer
from apiserver.storage.memory import MemoryStorage
from generated.server import OPENAPI_DIR, build_apis

JANE = UserInfo("jane", uid="7", groups=("devs", "system:authenticated"), extra={"team": ("a",)})


class NoDeletes:
    """Allows everything but deleting; has rules only in the namespace "mine"."""

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        if attributes.verb == "delete":
            return Decision.DENY, f"{attributes.user.name} may not delete {attributes.resource}"
        return Decision.ALLOW, ""

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        if namespace != "mine":
            return Rules(incomplete=True, evaluation_error="no rules outside mine")
        return await AlwaysAllow().rules_for(user, namespace)


def review(group: str, kind: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": f"{group}/v1", "kind": kind, "metadata": {}}
    if spec is not None:
        body["spec"] = spec
    return body


def create(plural: str, group: str, body: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        server = APIServer(build_apis(), MemoryStorage(), OPENAPI_DIR, authorizer=NoDeletes())
        store = server.stores[(group, plural)]
        return await store.create(None, body, options=WriteOptions(user=JANE))

    return asyncio.run(main())


def test_an_access_review_is_the_authorizers_verdict_for_the_writer() -> None:
    group = "authorization.k8s.io"
    asked = {"resourceAttributes": {"verb": "delete", "resource": "configmaps", "namespace": "x"}}
    denied = create(
        "selfsubjectaccessreviews", group, review(group, "SelfSubjectAccessReview", asked)
    )
    assert denied["status"] == {
        "allowed": False,
        "denied": True,
        "reason": "jane may not delete configmaps",
    }
    asked = {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}
    allowed = create(
        "selfsubjectaccessreviews", group, review(group, "SelfSubjectAccessReview", asked)
    )
    assert allowed["status"] == {"allowed": True}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({}, "spec.resourceAttributes"),
        (
            {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/"}},
            "spec.nonResourceAttributes",
        ),
    ],
)
def test_an_access_review_names_exactly_one_kind_of_attributes(
    spec: dict[str, Any], field: str
) -> None:
    # kube's ValidateSelfSubjectAccessReviewSpec
    group = "authorization.k8s.io"
    with pytest.raises(errors.APIError) as invalid:
        create("selfsubjectaccessreviews", group, review(group, "SelfSubjectAccessReview", spec))
    assert invalid.value.code == 422
    assert [cause.field for cause in invalid.value.causes] == [field]


def test_a_rules_review_lists_the_authorizers_rules_for_the_namespace() -> None:
    group = "authorization.k8s.io"
    kind = "SelfSubjectRulesReview"
    mine = create("selfsubjectrulesreviews", group, review(group, kind, {"namespace": "mine"}))
    assert mine["status"]["resourceRules"] == [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
    ]
    other = create("selfsubjectrulesreviews", group, review(group, kind, {"namespace": "x"}))
    assert other["status"] == {
        "resourceRules": [],
        "nonResourceRules": [],
        "incomplete": True,
        "evaluationError": "no rules outside mine",
    }


def test_a_self_subject_review_is_the_writers_user() -> None:
    group = "authentication.k8s.io"
    answer = create("selfsubjectreviews", group, review(group, "SelfSubjectReview"))
    assert answer["status"]["userInfo"] == {
        "username": "jane",
        "uid": "7",
        "groups": ["devs", "system:authenticated"],
        "extra": {"team": ["a"]},
    }
