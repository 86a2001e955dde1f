"""CEL cost limits through a real server: rules kube's static estimate accepts but whose
evaluation on a hostile object would hold the server are refused before they run, with kube's Status (422
Invalid, the cause at the rule's node: apiextensions-apiserver pkg/apiserver/schema/cel/validation.go), in
milliseconds, while the server goes on answering other clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.crdproject import crd_server, crd_yaml
from tests.serverproc import ServerProcess

BATCHES = "/apis/budget.example.com/v1/namespaces/default/batchs"  # crd_yaml: the kind plus s
# kube accepts both rules (map: 3,000 x 14 = 42,014; the nested loop: 9,725,402 < 10,000,000), but this
# server's engine copies the list map builds at each step (3,000 items: ~0.5 s) and the nested loop over
# 1,800 items costs 9.7 times the per-call limit
CRD = crd_yaml(
    "budget.example.com",
    "Batch",
    """
    type: object
    properties:
      doubled:
        type: array
        maxItems: 3000
        items: {type: integer}
        x-kubernetes-validations:
        - rule: "self.map(x, x * 2).all(y, y >= 0)"
      pairs:
        type: array
        maxItems: 1800
        items: {type: integer}
        x-kubernetes-validations:
        - rule: "self.all(x, self.all(y, true))"
          message: pairs are checked pairwise
    """,
)
ANSWER_WITHIN = 2.0  # seconds: refusals take milliseconds; room for a loaded machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Overrides conftest's server with one serving the Batch CRD above."""
    yield from crd_server(tmp_path_factory, "budget.example.com", CRD)


def batch(name: str, /, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "budget.example.com/v1",
        "kind": "Batch",
        "metadata": {"name": name},
        "spec": spec,
    }


def per_call(rule: str) -> str:
    return (
        "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further"
        f" validation rules will be run due to call cost exceeds limit for rule: {rule}"
    )


def test_a_hostile_list_is_refused_at_once_and_others_are_answered_meanwhile(
    client: httpx.Client, server: ServerProcess
) -> None:
    latencies: list[float] = []
    done = threading.Event()

    def other_client() -> None:
        with server.client(timeout=10) as other:
            while not done.is_set():
                started = time.perf_counter()
                assert other.get(BATCHES).status_code == 200
                latencies.append(time.perf_counter() - started)

    def answered(count: int) -> None:
        deadline = time.monotonic() + 10
        while len(latencies) < count and time.monotonic() < deadline:
            time.sleep(0.005)

    watcher = threading.Thread(target=other_client)
    watcher.start()
    try:
        answered(1)
        before = len(latencies)
        started = time.perf_counter()
        refused = client.post(BATCHES, json=batch("hostile", doubled=list(range(3000))))
        elapsed = time.perf_counter() - started
        answered(before + 2)  # the other client's requests around and after the hostile one
    finally:
        done.set()
        watcher.join()
    assert refused.status_code == 422, refused.text
    status = refused.json()
    assert status["reason"] == "Invalid"
    assert [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("FieldValueInvalid", "spec.doubled", per_call("self.map(x, x * 2).all(y, y >= 0)"))
    ]
    assert elapsed < ANSWER_WITHIN
    assert latencies and max(latencies) < ANSWER_WITHIN
    assert client.get(f"{BATCHES}/hostile").status_code == 404


def test_a_rule_over_the_per_call_limit_names_its_message(client: httpx.Client) -> None:
    """ruleErrorString: the rule's message when it has one."""
    refused = client.post(BATCHES, json=batch("pairs", pairs=list(range(1800))))
    assert refused.status_code == 422, refused.text
    assert refused.json()["details"]["causes"][0]["message"] == per_call(
        "pairs are checked pairwise"
    )


def test_the_same_rules_on_smaller_lists_run(client: httpx.Client) -> None:
    created = client.post(
        BATCHES, json=batch("small", doubled=list(range(500)), pairs=list(range(300)))
    )
    assert created.status_code == 201, created.text
