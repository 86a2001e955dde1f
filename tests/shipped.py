"""Paths and objects of the shipped definitions (definitions/) as tests send them, and the Status check every
HTTP test shares."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Final

import httpx

from tests.serverproc import REPO

SHIPPED_DEFINITIONS: Final = (
    "platform.example.com/cluster.yaml",
    "stable.example.com/crontab.yaml",
)
"""The repository's own definitions, relative to definitions/. A project a test builds starts from these only:
a kind the user added beside them (the README's "Adding a kind") must not change what the suite sees."""


def copy_shipped_definitions(target: Path) -> None:
    """Copy the shipped definitions into ``target`` (a project's definitions/ directory)."""
    for name in SHIPPED_DEFINITIONS:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "definitions" / name, target / name)


CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
CRONTABS_BETA = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs"
CLUSTERS = "/apis/platform.example.com/v1alpha1/computeclusters"  # cluster-scoped
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def crontab(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {
            "cronSpec": "* * * * */5",
            "image": "my-awesome-cron-image",
            "replicas": 1,
            **spec,
        },
    }


def compute_cluster(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "platform.example.com/v1alpha1",
        "kind": "ComputeCluster",
        "metadata": {"name": name, **({"labels": labels} if labels else {})},
        "spec": {"region": "eu"},
    }


def assert_status(response: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    """The response is a failure ``metav1.Status`` with this code and reason (API-CONVENTIONS.md §9)."""
    assert response.status_code == code, response.text
    assert response.headers["content-type"].startswith("application/json")
    status: dict[str, Any] = response.json()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1"
    assert status["status"] == "Failure"
    assert status["reason"] == reason
    assert status["code"] == code
    return status
