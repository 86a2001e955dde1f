"""x-kubernetes-validations through a real server: CEL rules checked on create, and transition rules
(``oldSelf``) on PUT, merge patch and server-side apply, with kube's Status (422 Invalid, the causes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.crdproject import crd_server, crd_yaml
from tests.serverproc import ServerProcess

WIDGETS = "/apis/cel.example.com/v1/namespaces/default/widgets"
CRD = crd_yaml(
    "cel.example.com",
    "Widget",
    """
    type: object
    x-kubernetes-validations:
    - rule: "self.minReplicas <= self.maxReplicas"
      # not string(self.minReplicas): kube's estimate of a converted number's size is unbounded
      messageExpression: "'minReplicas exceeds maxReplicas at size ' + self.size"
      fieldPath: .minReplicas
    properties:
      size:
        type: string
        x-kubernetes-validations:
        - rule: self == oldSelf
          message: size is immutable
      minReplicas: {type: integer}
      maxReplicas: {type: integer}
      name:
        type: string
        x-kubernetes-validations:
        - rule: self.split('-').size() <= 2
          reason: FieldValueForbidden
          message: at most one dash
    """,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Overrides conftest's server with one serving the Widget CRD above."""
    yield from crd_server(tmp_path_factory, "cel.example.com", CRD)


def widget(name: str, /, **spec: Any) -> dict[str, Any]:
    spec = {"size": "small", "minReplicas": 1, "maxReplicas": 3, **spec}
    return {
        "apiVersion": "cel.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    }


def causes(response: httpx.Response) -> list[tuple[str, str, str]]:
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    return [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]]


def test_create_checks_the_rules(client: httpx.Client) -> None:
    refused = client.post(WIDGETS, json=widget("w-bad", minReplicas=5, name="a-b-c"))
    assert causes(refused) == [
        (
            "FieldValueInvalid",
            "spec.minReplicas",
            "Invalid value: minReplicas exceeds maxReplicas at size small",
        ),
        ("FieldValueForbidden", "spec.name", "Forbidden: at most one dash"),
    ]
    assert refused.json()["message"].startswith('Widget.cel.example.com "w-bad" is invalid: ')
    assert client.post(WIDGETS, json=widget("w-ok", name="a-b")).status_code == 201


def test_transition_rules_on_put_patch_and_apply(client: httpx.Client) -> None:
    created = client.post(WIDGETS, json=widget("w-moving"))
    assert created.status_code == 201, created.text
    current = created.json()
    current["spec"]["size"] = "large"
    expected = [("FieldValueInvalid", "spec.size", 'Invalid value: "large": size is immutable')]
    assert causes(client.put(f"{WIDGETS}/w-moving", json=current)) == expected
    merge = {"content-type": "application/merge-patch+json"}
    patch = client.patch(f"{WIDGETS}/w-moving", json={"spec": {"size": "large"}}, headers=merge)
    assert causes(patch) == expected
    applied = widget("w-moving", size="large")
    apply = client.patch(
        f"{WIDGETS}/w-moving",
        json=applied,
        params={"fieldManager": "tool", "force": "true"},
        headers={"content-type": "application/apply-patch+yaml"},
    )
    assert causes(apply) == expected
    # changing something else keeps the immutable field as it was: allowed
    grown = client.patch(f"{WIDGETS}/w-moving", json={"spec": {"maxReplicas": 9}}, headers=merge)
    assert grown.status_code == 200, grown.text
    assert grown.json()["spec"] == {"size": "small", "minReplicas": 1, "maxReplicas": 9}
