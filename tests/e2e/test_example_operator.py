"""The example kopf operator (examples/kopf_operator/operator.py), run as a subprocess as its README says,
against the apiforge.testing fixtures: the test's kubeconfig and namespace, its CronTabs written and its
ConfigMaps read through the typed client. The operator keeps a ConfigMap per CronTab from an informer's
lister, owned by the CronTab."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from apiclient import Connection
from apiclient.errors import NotFound
from generated.core.v1.client import configmaps
from generated.core.v1.models import ConfigMap
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import crontabs
from generated.stable_example_com.v1.models import CronTab, CronTabSpec

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).parents[2]
OPERATOR = ROOT / "examples" / "kopf_operator" / "operator.py"
T = TypeVar("T")


@pytest.fixture
def operator(apiforge_kubeconfig: Path, apiforge_namespace: str, tmp_path: Path) -> Iterator[Path]:
    log = tmp_path / "operator.log"
    command = [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace"]
    with log.open("w") as output:
        process = subprocess.Popen(
            [*command, apiforge_namespace, str(OPERATOR)],
            cwd=ROOT,
            env={**os.environ, "KUBECONFIG": str(apiforge_kubeconfig), "PYTHONPATH": str(ROOT)},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    yield log
    process.send_signal(signal.SIGINT)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for(what: str, probe: Callable[[], T | None], log: Path, timeout: float = 60.0) -> T:
    deadline = time.monotonic() + timeout
    while (found := probe()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    return found


def test_the_operator_keeps_a_configmap_per_crontab(
    operator: Path, apiforge_connection: Connection, apiforge_namespace: str
) -> None:
    tabs = crontabs(apiforge_connection)
    maps = configmaps(apiforge_connection)
    tab = tabs.create(
        CronTab(
            metadata=ObjectMeta(name="nightly", namespace=apiforge_namespace),
            spec=CronTabSpec(cron_spec="0 3 * * *", image="report:1"),
        )
    )

    def child(image: str) -> ConfigMap | None:
        try:
            found = maps.get("nightly-schedule", apiforge_namespace)
        except NotFound:
            return None
        return found if found.data and found.data.get("image") == image else None

    made = wait_for("the ConfigMap", lambda: child("report:1"), operator)
    assert made.data == {"schedule": "0 3 * * *", "image": "report:1"}
    (owner,) = made.metadata.owner_references or []
    assert (owner.kind, owner.name, owner.uid) == ("CronTab", "nightly", tab.metadata.uid)
    tabs.patch("nightly", {"spec": {"image": "report:2"}}, apiforge_namespace)
    updated = wait_for("the ConfigMap updated", lambda: child("report:2"), operator)
    assert updated.data == {"schedule": "0 3 * * *", "image": "report:2"}
