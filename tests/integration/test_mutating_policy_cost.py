"""A MutatingAdmissionPolicy keeps kube's cost limits and the event loop free (in process, no server
start): an expression over the per-call limit is not run and refuses the write with kube's cancellation
error, and a costly evaluation runs off the event loop (registry.offload) while a cheap one stays on it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from builtin.admissionregistration import mutating as mutating_module
from tests.inprocess import inprocess_client
from tests.integration.test_admission_policy_cost import CLUSTERS, cluster

ADMISSION = "/apis/admissionregistration.k8s.io/v1beta1"
COUNT = "Object{metadata: Object.metadata{labels: {'keys': string(object.spec.labels.filter(k, k.startsWith('k')).size())}}}"  # fmt: skip
PAIRWISE = "Object{metadata: Object.metadata{labels: {'pairs': string(object.spec.labels.all(a, object.spec.labels.all(b, a != b || a == b)))}}}"  # fmt: skip


async def install(client: httpx.AsyncClient, name: str, expression: str) -> None:
    """The policy and its binding on ComputeClusters labelled cost=<name>, once the plugin applies it."""
    rules = [
        {
            "apiGroups": ["platform.example.com"],
            "apiVersions": ["v1alpha1"],
            "operations": ["CREATE"],
            "resources": ["computeclusters"],
        }
    ]
    mutation = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}
    spec = {
        "matchConstraints": {
            "resourceRules": rules,
            "objectSelector": {"matchLabels": {"cost": name}},
        },
        "mutations": [mutation],
        "reinvocationPolicy": "Never",
    }
    for plural, kind, body in (
        ("mutatingadmissionpolicies", "MutatingAdmissionPolicy", spec),
        ("mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", {"policyName": name}),
    ):
        body = {"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": kind, "spec": body}
        created = await client.post(
            f"{ADMISSION}/{plural}", json={**body, "metadata": {"name": name}}
        )
        assert created.status_code == 201, created.text
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        response = await client.post(CLUSTERS, params={"dryRun": "All"}, json=cluster(name, 1))
        if response.status_code != 201 or len(response.json()["metadata"]["labels"]) > 1:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"policy {name} not applied")


@pytest.fixture
def evaluating_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the threads that evaluated a mutating policy."""
    names: list[str] = []
    run = mutating_module._run

    def spy(*args: Any) -> Any:
        names.append(threading.current_thread().name)
        return run(*args)

    monkeypatch.setattr(mutating_module, "_run", spy)
    yield names


def test_mutation_costs(evaluating_threads: list[str]) -> None:
    asyncio.run(_mutation_costs(evaluating_threads))


async def _mutation_costs(threads: list[str]) -> None:
    async with inprocess_client() as client:
        await install(client, "count", COUNT)
        threads.clear()
        small = await client.post(CLUSTERS, json=cluster("count", 3))
        assert small.json()["metadata"]["labels"]["keys"] == "3", small.text
        large = await client.post(CLUSTERS, json={**cluster("count", 300), "metadata": {"name": "large", "labels": {"cost": "count"}}})  # fmt: skip
        assert large.status_code == 201, large.text
        assert large.json()["metadata"]["labels"]["keys"] == "300", large.text
        assert threads[0] == "MainThread" and threads[1].startswith("apiforge-heavy"), threads

        await install(client, "pairs", PAIRWISE)
        refused = await client.post(CLUSTERS, json=cluster("pairs", 1500))
        assert refused.status_code == 403, refused.text
        assert refused.json()["reason"] == "Invalid"
        assert refused.json()["message"] == (
            f"policy 'pairs' with binding 'pairs' denied request: expression '{PAIRWISE}' resulted in "
            "error: operation cancelled: actual cost limit exceeded"
        )
