"""A kopf operator that installs its CustomResourceDefinition at start (tests/e2e/operator_widget.py) handles
its kind on a real apiforge server (issue 12): the CRD is served without a restart, kopf discovers it
through its watch on CRDs, and a Widget created afterwards is handled (its status written)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_kopf_operator import Operator, assert_no_fatal_errors, start_operator
from tests.serverproc import ServerProcess

pytestmark = pytest.mark.timeout(90)

OPERATOR = Path(__file__).with_name("operator_widget.py")
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.kopf.runtime.example"
WIDGETS = "/apis/kopf.runtime.example/v1/namespaces/default/widgets"


def poll(probe: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.fixture(scope="module")
def operator(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    log = tmp_path_factory.mktemp("kopf") / "operator.log"
    running = start_operator(server.kubeconfig, log, OPERATOR)
    yield running
    running.stop()


def test_the_operator_installs_its_crd_and_handles_its_kind(
    operator: Operator, client: httpx.Client
) -> None:
    poll(lambda: client.get(CRD).status_code == 200)
    poll(lambda: client.get(WIDGETS).status_code == 200)
    body = {"apiVersion": "kopf.runtime.example/v1", "kind": "Widget", "metadata": {"name": "w1"}}
    assert client.post(WIDGETS, json={**body, "spec": {"size": 4}}).status_code == 201

    def observed() -> dict[str, Any] | None:
        status: dict[str, Any] | None = client.get(f"{WIDGETS}/w1").json().get("status")
        return status if status and "observed" in status else None

    assert poll(observed)["observed"] == 4
    assert_no_fatal_errors(operator)
