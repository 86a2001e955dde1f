"""The admissionregistration.k8s.io table cells, against kube's printers
(pkg/printers/internalversion/printers.go: printValidatingAdmissionPolicyBinding and friends)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from builtin.admissionregistration import printers

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, "<unset>"),
        ({"paramRef": {"name": "limits", "namespace": "default"}}, "default/limits"),
        ({"paramRef": {"name": "limits"}}, "*/limits"),
        (
            {"paramRef": {"selector": {"matchLabels": {"role": "param", "a": "b"}}}},
            "a=b,role=param",
        ),
        (
            {
                "paramRef": {
                    "selector": {
                        "matchExpressions": [
                            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                            {"key": "gone", "operator": "DoesNotExist"},
                        ]
                    }
                }
            },
            "env in (dev,prod),!gone",
        ),
        ({"paramRef": {"selector": {}}}, "<none>"),
    ],
)
def test_param_ref(spec: dict[str, Any], expected: str) -> None:
    assert printers.param_ref({"spec": spec}, NOW) == expected


def test_counts_and_param_kind() -> None:
    policy = {
        "spec": {"validations": [{}, {}], "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}
    }
    assert printers.validations(policy, NOW) == 2
    assert printers.param_kind(policy, NOW) == "v1/ConfigMap"
    assert printers.param_kind({"spec": {}}, NOW) == "<unset>"
    assert printers.mutations({"spec": {"mutations": [{}]}}, NOW) == 1
    assert printers.webhooks({"webhooks": [{}, {}, {}]}, NOW) == 3
    assert printers.webhooks({}, NOW) == 0
