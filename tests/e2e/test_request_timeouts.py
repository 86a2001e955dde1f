"""kubectl and the `kubernetes` Python client against a server with a 1 s `--request-timeout`: a watch (long-
running) outlives it, and a request past its deadline surfaces as kube's Timeout error in both, while the write
it carried stays committed (kube's timeout handler lets the handler finish and drops its answer). The deadline
is passed as ``?timeout=1ns`` (WithRequestDeadline takes the shorter of it and the server's), which a write to
SQLite, run off the event loop, always outlasts. A handler past its deadline can still use the body it had read
(kubectl sends a small body with its headers), not one still arriving: Go closes the request body once the
timeout handler has answered, and so does uvicorn."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.pyclient import core_v1
from tests.serverproc import ServerProcess, free_port

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
]
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TIMEOUT_ERROR = (
    "Error from server (Timeout): Timeout: request did not complete within the allotted timeout"
)


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("data"), free_port(), extra_args=("--request-timeout=1s",)
    )
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def core(short: ServerProcess) -> Iterator[client.CoreV1Api]:
    with core_v1(short.kubeconfig) as api:
        yield api


def kubectl(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(server.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def eventually(check: Callable[[], object]) -> None:
    """The handler finishes its write after the 504 went out: ``check`` passes within a few seconds."""
    deadline = time.monotonic() + 10
    while True:
        try:
            check()
            return
        except (ApiException, subprocess.CalledProcessError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_kubectl_get_watch_outlives_the_request_timeout(
    short: ServerProcess, core: client.CoreV1Api
) -> None:
    with subprocess.Popen(
        ["kubectl", "--kubeconfig", str(short.kubeconfig), "get", "configmaps", "-w", "-o", "name"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as watching:
        time.sleep(2.5)  # past the 1 s request timeout
        core.create_namespaced_config_map(
            "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="late"))
        )
        time.sleep(1)
        watching.terminate()
        out, err = watching.communicate(timeout=10)
    assert "configmap/late" in out, err


def test_kubectl_reports_kubes_timeout_error_and_the_write_is_whole_or_absent(
    short: ServerProcess, tmp_path: Path
) -> None:
    """Whether the write lands depends on whether its body was read before the deadline (1 ns): over TLS
    kubectl's body comes in a record of its own, often after it; as in Go, a body unread when the 504 goes
    out is closed and the handler fails. Either way nothing is half done: the object is there, or creating
    it again succeeds."""
    manifest = tmp_path / "cm.json"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-kubectl"}}
    manifest.write_text(json.dumps(body))
    result = kubectl(short, "create", "--raw", f"{CONFIGMAPS}?timeout=1ns", "-f", str(manifest))
    assert result.returncode == 1
    assert result.stderr.strip() == TIMEOUT_ERROR
    time.sleep(0.5)  # a handler still running after the 504 finishes its write

    def whole_or_absent() -> None:
        if kubectl(short, "get", "configmap", "by-kubectl").returncode != 0:
            kubectl(short, "create", "-f", str(manifest)).check_returncode()

    eventually(whole_or_absent)
    kubectl(short, "get", "configmap", "by-kubectl").check_returncode()


def test_the_python_client_raises_kubes_504_timeout(
    core: client.CoreV1Api,
) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-python"}}
    api = core.api_client
    method, url, headers, payload, _ = api.param_serialize(
        "POST",
        CONFIGMAPS,
        query_params=[("timeout", "1ns")],
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
    )
    response = api.call_api(method, url, headers, payload)
    response.read()
    with pytest.raises(ApiException) as raised:
        api.response_deserialize(response, {"201": "V1ConfigMap"})
    assert raised.value.status == 504
    assert json.loads(raised.value.body)["reason"] == "Timeout"
    # whether the write happened depends on whether its body (sent apart from its headers by urllib3) was
    # read before the deadline: as in Go, a body unread when the 504 goes out is closed
