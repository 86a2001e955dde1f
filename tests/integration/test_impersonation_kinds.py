"""Impersonation on a server whose project serves neither core's ServiceAccount nor the authentication.k8s.io
kinds, built by apiforge.testing's app as `apiforge serve` builds it, with `--authorization-mode=RBAC`. The
built-in kinds still hand the impersonation filter where service accounts, uids and extras are authorized:
kube's WithImpersonation (staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go) takes them
from k8s.io/api whatever the server serves, so an aggregated server serving neither impersonates a
`system:serviceaccount:<ns>:<name>` user as a service account (authorized on core's serviceaccounts, in the
account's groups) without the account existing, and a uid in authentication.k8s.io."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from apiforge.testing.app import build_app
from apiserver.server.apis import APIs
from generated.server import OPENAPI_DIR, build_apis
from tests.inprocess import BearerUsers, InProcessServer

RBAC = "/apis/rbac.authorization.k8s.io/v1"
ADMIN = {"Authorization": "Bearer root/system:masters"}
IMPERSONATOR = {"Authorization": "Bearer impersonator"}
LIMITED = {"Authorization": "Bearer limited"}
ACCOUNT = "system:serviceaccount:team-a:builder"
SETTLE_SECONDS = 5.0


def without_service_accounts_or_authentication() -> APIs:
    """This repository's APIs less core's ServiceAccount and every authentication.k8s.io kind."""
    apis = build_apis()
    gone = {
        (resource.group, resource.plural)
        for resource in apis.scheme
        if resource.group == "authentication.k8s.io"
        or (resource.group, resource.kind) == ("", "ServiceAccount")
    }
    assert len(gone) == 4  # serviceaccounts, tokenreviews, selfsubjectreviews, tokenrequests
    for group, plural in gone:
        apis.scheme.remove(group, plural)
    return APIs(
        apis.scheme,
        {key: rest for key, rest in apis.rest.items() if key not in gone},
        {key: parts for key, parts in apis.parts.items() if key not in gone},
    )


def settle(check: Callable[[], bool]) -> None:
    """The RBAC authorizer follows writes through watches: poll until ``check`` holds, or time out."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while not check():
        assert time.monotonic() < deadline, "the bindings never took effect"
        time.sleep(0.02)


def listing(http: httpx.Client, namespace: str, headers: dict[str, str]) -> httpx.Response:
    return http.get(f"/api/v1/namespaces/{namespace}/configmaps", headers=headers)


def create(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    created = http.post(path, json=body, headers=ADMIN)
    assert created.status_code == 201, created.text


def grant(http: httpx.Client, user: str, rules: list[dict[str, Any]]) -> None:
    """A ClusterRole of ``rules`` bound to ``user`` cluster-wide."""
    create(http, f"{RBAC}/clusterroles", {"metadata": {"name": user}, "rules": rules})
    create(
        http,
        f"{RBAC}/clusterrolebindings",
        {
            "metadata": {"name": user},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": user,
            },
            "subjects": [{"kind": "User", "name": user}],
        },
    )


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    app = build_app(
        without_service_accounts_or_authentication(),
        OPENAPI_DIR,
        authorization_mode="RBAC",
        authenticators=[BearerUsers()],
    )
    with InProcessServer(app) as server, server.client() as client:
        people = {"apiGroups": [""], "resources": ["users", "groups"], "verbs": ["impersonate"]}
        grant(client, "limited", [people])
        accounts = {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}
        attributes = {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["uids", "userextras/scopes"],
            "verbs": ["impersonate"],
        }
        grant(client, "impersonator", [people, accounts, attributes])
        create(client, "/api/v1/namespaces", {"metadata": {"name": "team-a"}})
        # the account's namespace group may read configmaps there: only an impersonated service account
        # is in it
        create(
            client,
            f"{RBAC}/namespaces/team-a/rolebindings",
            {
                "metadata": {"name": "accounts-view"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "view",
                },
                "subjects": [{"kind": "Group", "name": "system:serviceaccounts:team-a"}],
            },
        )
        # every binding in effect: both may impersonate jane (refused as jane), the account may list
        for who in (IMPERSONATOR, LIMITED):
            settle(
                lambda who=who: (
                    "jane" in listing(client, "team-a", {**who, "Impersonate-User": "jane"}).text
                )
            )
        settle(
            lambda: (
                listing(client, "team-a", {**IMPERSONATOR, "Impersonate-User": ACCOUNT}).is_success
            )
        )
        yield client


def test_the_server_serves_neither_service_accounts_nor_the_authentication_group(
    http: httpx.Client,
) -> None:
    core = http.get("/api/v1", headers=ADMIN).json()
    served = {resource["name"] for resource in core["resources"]}
    assert "configmaps" in served
    assert "serviceaccounts" not in served
    assert http.get("/apis/authentication.k8s.io", headers=ADMIN).status_code == 404


def test_a_service_account_is_impersonated_as_one_without_existing(http: httpx.Client) -> None:
    as_account = {**IMPERSONATOR, "Impersonate-User": ACCOUNT}
    # through system:serviceaccounts:team-a, the account's namespace group
    assert listing(http, "team-a", as_account).status_code == 200
    refused = listing(http, "default", as_account)
    assert refused.status_code == 403
    assert refused.json()["message"].endswith(
        f'User "{ACCOUNT}" cannot list resource "configmaps" in API group "" in the namespace "default"'
    )


def test_impersonating_a_service_account_is_authorized_on_serviceaccounts(
    http: httpx.Client,
) -> None:
    refused = listing(http, "team-a", {**LIMITED, "Impersonate-User": ACCOUNT})
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'serviceaccounts "builder" is forbidden: User "limited" cannot impersonate resource'
        ' "serviceaccounts" in API group "" in the namespace "team-a"'
    )


def test_uids_and_extras_are_authorized_in_the_authentication_group(http: httpx.Client) -> None:
    jane = {"Impersonate-User": "jane", "Impersonate-Uid": "42", "Impersonate-Extra-Scopes": "view"}
    impersonated = listing(http, "team-a", {**IMPERSONATOR, **jane})
    assert impersonated.status_code == 403  # as jane, who may not list
    assert 'User "jane" cannot list' in impersonated.json()["message"]
    refused = listing(http, "team-a", {**LIMITED, **jane})
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'userextras.authentication.k8s.io "view" is forbidden: User "limited" cannot impersonate'
        ' resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'
    )
    refused = listing(
        http, "team-a", {**LIMITED, "Impersonate-User": "jane", "Impersonate-Uid": "42"}
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'uids.authentication.k8s.io "42" is forbidden: User "limited" cannot impersonate resource'
        ' "uids" in API group "authentication.k8s.io" at the cluster scope'
    )
