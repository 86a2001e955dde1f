"""Conversion strategy Webhook at run time: the multi-version kubebuilder CronJob CRD of the
conformance set (v1 stores ``schedule`` as a cron string, v2 as an object) converted by a small TLS webhook in
this process, reached through a Service reference (an ExternalName Service naming localhost, the certificate
issued for ``<name>.<namespace>.svc`` as kube verifies it) and trusted through ``caBundle``. Then the webhook
fails in each of the ways kube's webhook converter checks for
(k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go): kube's
``conversion webhook for ... failed`` as a 500 with no reason (kube's answer to a plain error), no hang, and nothing written half-way. One server
and one webhook for the module."""

from __future__ import annotations

import base64
import json
import os
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests import certs
from tests.serverproc import FIXTURES, REPO, ServerProcess, free_port

CRD_FILE = FIXTURES / "crds" / "batch.tutorial.kubebuilder.io_cronjobs-multiversion.yaml"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "batch.tutorial.kubebuilder.io"
V1 = f"/apis/{GROUP}/v1/namespaces/default/cronjobs"
V2 = f"/apis/{GROUP}/v2/namespaces/default/cronjobs"
SERVICE = "cronjob-conversion"
TIMEOUT = 1.5  # the server's conversion webhook timeout here (kube's is a fixed 30 s)
FIELDS = ("minute", "hour", "dayOfMonth", "month", "dayOfWeek")
FAILED = f"conversion webhook for {GROUP}/v1, Kind=CronJob "


class Webhook(BaseHTTPRequestHandler):
    """Converts CronJobs between v1 and v2 as the kubebuilder tutorial's webhook does; ``mode`` breaks it."""

    mode = "ok"
    reviews: list[dict[str, Any]] = []  # noqa: RUF012 (the test's record of every review received)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``reviews`` instead."""

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Webhook.reviews.append(review)
        request = review["request"]
        if self.mode == "hang":
            time.sleep(TIMEOUT * 2)
        converted = [convert(obj, request["desiredAPIVersion"]) for obj in request["objects"]]
        response: dict[str, Any] = {
            "uid": request["uid"],
            "result": {"status": "Success"},
            "convertedObjects": converted,
        }
        if self.mode == "wrong-uid":
            response["uid"] = "not-the-request"
        elif self.mode == "failure":
            response["result"] = {"status": "Failure", "message": "cannot convert this one"}
        elif self.mode == "too-few":
            response["convertedObjects"] = []
        elif self.mode == "renamed":
            for obj in converted:
                obj["metadata"]["name"] = "someone-else"
        elif self.mode == "wrong-version":
            for obj in converted:
                obj["apiVersion"] = f"{GROUP}/v3"
        elif self.mode == "labels":
            for obj in converted:
                obj["metadata"]["labels"] = {"converted": "yes"}
                obj["metadata"]["generation"] = 99  # not the webhook's to change: restored
        body = json.dumps({**review, "response": response, "request": None}).encode()
        if self.mode == "garbage":
            body = b"<html>not a review</html>"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def convert(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    """v1's ``schedule: "m h dom mon dow"`` and v2's ``schedule: {minute: m, ...}``, either way."""
    out = json.loads(json.dumps(obj))
    schedule = out["spec"]["schedule"]
    if api_version.endswith("/v2") and isinstance(schedule, str):
        out["spec"]["schedule"] = dict(zip(FIELDS, schedule.split(" "), strict=True))
    elif api_version.endswith("/v1") and isinstance(schedule, dict):
        out["spec"]["schedule"] = " ".join(schedule.get(f, "*") for f in FIELDS)
    out["apiVersion"] = api_version
    return out


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """The webhook's port and the caBundle that trusts it."""
    directory = tmp_path_factory.mktemp("webhook")
    authority = certs.ca("conversion-ca")
    pair = certs.serving(authority, "127.0.0.1", (f"{SERVICE}.default.svc",))
    certificate, key = pair.write(directory, "serving")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1], base64.b64encode(authority.pem.encode()).decode()
    httpd.shutdown()
    httpd.server_close()


def started(data: Path, cwd: Path = REPO) -> ServerProcess:
    """A server of the project in ``cwd``, with a short conversion webhook timeout (the hanging webhook's
    test)."""
    os.environ["APIFORGE_CONVERSION_WEBHOOK_TIMEOUT"] = str(TIMEOUT)
    process = ServerProcess(data, free_port(), cwd=cwd)
    try:
        process.start()
    finally:
        del os.environ["APIFORGE_CONVERSION_WEBHOOK_TIMEOUT"]
    return process


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = started(tmp_path_factory.mktemp("data"))
    yield process
    process.stop()


def crd(port: int, ca_bundle: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(Path(CRD_FILE).read_text())
    document["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {
                    "namespace": "default",
                    "name": SERVICE,
                    "path": "/convert",
                    "port": port,
                },
                "caBundle": ca_bundle,
            },
        },
    }
    return document


def cronjob(name: str, schedule: Any, version: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule, "jobTemplate": {}},
    }


def wait_for(check: Any, timeout: float = 5.0) -> None:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < timeout, "not within the time"
        time.sleep(0.02)


def create_service(client: httpx.Client) -> None:
    """The webhook's Service: an ExternalName naming localhost, where the webhook listens."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE},
        "spec": {"type": "ExternalName", "externalName": "localhost"},
    }
    assert client.post("/api/v1/namespaces/default/services", json=service).status_code == 201


@pytest.fixture(scope="module")
def installed(client: httpx.Client, webhook: tuple[int, str]) -> dict[str, Any]:
    """The CRD with its webhook, served in both versions; the Service naming localhost."""
    port, ca_bundle = webhook
    create_service(client)
    document = crd(port, ca_bundle)
    answer = client.post(CRD_PATH, json=document)
    assert answer.status_code == 201, answer.text
    wait_for(lambda: client.get(V2).status_code == 200)
    return document


@pytest.fixture
def mode() -> Iterator[type[Webhook]]:
    """The webhook, set back to converting after each test."""
    Webhook.reviews.clear()
    yield Webhook
    Webhook.mode = "ok"


def test_objects_are_converted_by_the_webhook_both_ways(
    client: httpx.Client, installed: dict[str, Any], mode: type[Webhook]
) -> None:
    created = client.post(V2, json=cronjob("every-minute", dict.fromkeys(FIELDS, "*"), "v2"))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["schedule"] == dict.fromkeys(FIELDS, "*")
    # stored in v1, the storage version: the webhook converted the write
    assert client.get(f"{V1}/every-minute").json()["spec"]["schedule"] == "* * * * *"
    assert mode.reviews[0]["request"]["desiredAPIVersion"] == f"{GROUP}/v1"
    assert mode.reviews[0]["apiVersion"] == "apiextensions.k8s.io/v1"

    patched = client.patch(
        f"{V2}/every-minute",
        json={"spec": {"schedule": {"minute": "*/5"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["schedule"]["minute"] == "*/5"
    assert client.get(f"{V1}/every-minute").json()["spec"]["schedule"] == "*/5 * * * *"

    created = client.post(V1, json=cronjob("hourly", "0 * * * *", "v1"))
    assert created.status_code == 201
    assert client.get(f"{V2}/hourly").json()["spec"]["schedule"]["minute"] == "0"


def test_a_list_page_is_one_review(
    client: httpx.Client, installed: dict[str, Any], mode: type[Webhook]
) -> None:
    for name in ("page-a", "page-b", "page-c"):
        assert client.post(V1, json=cronjob(name, "1 2 3 4 5", "v1")).status_code == 201
    mode.reviews.clear()
    listed = client.get(V2)
    assert listed.status_code == 200
    names = {item["metadata"]["name"] for item in listed.json()["items"]}
    assert {"page-a", "page-b", "page-c"} <= names
    assert all(isinstance(item["spec"]["schedule"], dict) for item in listed.json()["items"])
    assert len(mode.reviews) == 1
    assert len(mode.reviews[0]["request"]["objects"]) == len(names)


def test_a_watch_in_the_other_version_gets_converted_events(
    client: httpx.Client, installed: dict[str, Any], mode: type[Webhook]
) -> None:
    assert client.post(V1, json=cronjob("watched", "5 4 * * *", "v1")).status_code == 201
    with client.stream(
        "GET", V2, params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "5"}
    ) as stream:
        for line in stream.iter_lines():
            event = json.loads(line)
            if event["object"]["metadata"]["name"] == "watched":
                break
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == f"{GROUP}/v2"
    assert event["object"]["spec"]["schedule"]["hour"] == "4"


def test_only_labels_and_annotations_of_the_answer_are_taken(
    client: httpx.Client, installed: dict[str, Any], mode: type[Webhook]
) -> None:
    assert client.post(V1, json=cronjob("relabelled", "0 0 * * *", "v1")).status_code == 201
    mode.mode = "labels"
    read = client.get(f"{V2}/relabelled").json()
    assert read["metadata"]["labels"] == {"converted": "yes"}
    assert read["metadata"]["generation"] == 1


def read_broken(client: httpx.Client, mode: type[Webhook], broken: str) -> httpx.Response:
    """A GET in v2 of an object stored in v1, once the webhook is ``broken``: kube's 500."""
    name = f"kept-{broken}"
    assert client.post(V1, json=cronjob(name, "0 1 * * *", "v1")).status_code == 201
    mode.mode = broken
    read = client.get(f"{V2}/{name}")
    assert read.status_code == 500
    return read


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("garbage", "failed: invalid character '<' looking for beginning of value"),
        ("wrong-uid", 'failed: expected response.uid="'),
        ("failure", "failed: cannot convert this one"),
        ("hang", '/convert?timeout=1.5s": context deadline exceeded'),
        ("too-few", "returned 0 objects, expected 1"),
        (
            "renamed",
            "returned invalid converted object at index 0: "
            "must have the same name: kept-renamed != someone-else",
        ),
        (
            "wrong-version",
            "returned invalid converted object at index 0: "
            f"invalid groupVersion (expected {GROUP}/v2, received {GROUP}/v3)",
        ),
    ],
)
def test_a_failing_webhook_is_kubes_500_and_writes_nothing(
    client: httpx.Client,
    installed: dict[str, Any],
    mode: type[Webhook],
    broken: str,
    message: str,
) -> None:
    name = f"kept-{broken}"
    started = time.monotonic()
    read = read_broken(client, mode, broken)
    assert time.monotonic() - started < TIMEOUT + 2  # no hang beyond the webhook's timeout
    status = read.json()
    assert "reason" not in status  # StatusReasonUnknown, as the oracle answers
    assert status["message"].startswith(FAILED), status["message"]
    assert message in status["message"]
    # a write in the other version fails before anything is stored
    created = client.post(V2, json=cronjob(f"new-{broken}", dict.fromkeys(FIELDS, "1"), "v2"))
    assert created.status_code == 500
    patched = client.patch(
        f"{V2}/{name}",
        json={"spec": {"suspend": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 500
    # the storage version needs no conversion: still served, and unchanged
    assert client.get(f"{V1}/new-{broken}").status_code == 404
    kept = client.get(f"{V1}/{name}").json()
    assert "suspend" not in kept["spec"] and kept["metadata"]["generation"] == 1


def test_a_webhook_that_is_down_is_kubes_500(
    client: httpx.Client, installed: dict[str, Any], mode: type[Webhook]
) -> None:
    assert client.post(V1, json=cronjob("unreached", "0 2 * * *", "v1")).status_code == 201
    closed = free_port()
    name = installed["metadata"]["name"]
    patch = {"spec": {"conversion": {"webhook": {"clientConfig": {"service": {"port": closed}}}}}}
    merge = {"Content-Type": "application/merge-patch+json"}
    assert client.patch(f"{CRD_PATH}/{name}", json=patch, headers=merge).status_code == 200
    try:
        wait_for(lambda: client.get(f"{V2}/unreached").status_code == 500)
        status = client.get(f"{V2}/unreached").json()
        assert status["message"] == (
            f'{FAILED}failed: Post "https://{SERVICE}.default.svc:{closed}/convert?timeout={TIMEOUT:g}s": '
            f"dial tcp localhost:{closed}: connect: connection refused"
        )
    finally:
        port = installed["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"]
        patch["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] = port
        assert client.patch(f"{CRD_PATH}/{name}", json=patch, headers=merge).status_code == 200
        wait_for(lambda: client.get(f"{V2}/unreached").status_code == 200)


def test_v1beta1_reviews_and_objects_stored_in_a_former_storage_version(
    client: httpx.Client, installed: dict[str, Any], mode: type[Webhook]
) -> None:
    """The last test of the module: it makes v2 the storage version. An object stored in v1 before is
    converted by the webhook from v1 on every read; with only v1beta1 listed, reviews are v1beta1."""
    assert client.post(V1, json=cronjob("older", "7 6 * * *", "v1")).status_code == 201
    name = installed["metadata"]["name"]
    current = client.get(f"{CRD_PATH}/{name}").json()
    current["spec"]["conversion"]["webhook"]["conversionReviewVersions"] = ["v1beta1"]
    for version in current["spec"]["versions"]:
        version["storage"] = version["name"] == "v2"
    assert client.put(f"{CRD_PATH}/{name}", json=current).status_code == 200
    wait_for(
        lambda: client.get(f"{CRD_PATH}/{name}").json()["status"]["storedVersions"] == ["v1", "v2"]
    )
    mode.reviews.clear()
    read = client.get(f"{V2}/older")
    assert read.status_code == 200, read.text
    assert read.json()["spec"]["schedule"]["hour"] == "6"
    assert [review["apiVersion"] for review in mode.reviews] == ["apiextensions.k8s.io/v1beta1"]
    assert mode.reviews[0]["request"]["objects"][0]["apiVersion"] == f"{GROUP}/v1"
    assert client.get(f"{V1}/older").json()["spec"]["schedule"] == "7 6 * * *"
    mode.reviews.clear()  # v2 is stored as it is written now
    created = client.post(V2, json=cronjob("newer", dict.fromkeys(FIELDS, "2"), "v2"))
    assert created.status_code == 201 and mode.reviews == []
