"""Paths and objects of the shipped definitions (definitions/) as tests send them, and the Status check every
HTTP test shares."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

import httpx

from generator.load import load_text
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


@functools.cache
def shipped_definitions() -> Path:
    """A definitions/ directory holding the shipped definitions only (one per test process), for tests whose
    expectations name what the repository ships."""
    root = Path(tempfile.mkdtemp(prefix="apiforge-shipped-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    copy_shipped_definitions(root / "definitions")
    return root / "definitions"


def user_added_resources() -> set[str]:
    """``plural.group`` (the plural alone in the core group) of each kind defined under definitions/ beside
    the shipped ones: what a server built from the repository serves on top of what the suite expects."""
    definitions = REPO / "definitions"
    added = set()
    for path in sorted(definitions.rglob("*.yaml")):
        if path.relative_to(definitions).as_posix() in SHIPPED_DEFINITIONS:
            continue
        for definition in load_text(path.read_text(), path).definitions:
            group = definition.group
            added.add(f"{definition.plural}.{group}" if group else definition.plural)
    return added


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
