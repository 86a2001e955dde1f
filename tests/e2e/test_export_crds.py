"""`apiforge export crds` and `apiforge conversion-webhook`, end to end with real processes.

Two servers: the repository's (it serves stable.example.com and platform.example.com, generated) and
tests/convertproject's (moves.example.com, generated). Each takes the CRDs of the other's kinds exactly as
exported, by kubectl apply and by POST, and establishes them. On the repository's server the exported
moves.example.com CRDs convert through `apiforge conversion-webhook` (TLS, reached through a Service as kube
resolves one, trusted through the exported caBundle): an object written in one version reads back in every
other version as the generated server of the same definitions returns it. Then the webhook gets hostile
ConversionReviews and answers as kube's example webhook does
(test/images/agnhost/crd-conversion-webhook/converter/framework.go)."""

from __future__ import annotations

import base64
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.convertproject import DEFINITIONS as MOVES_DEFINITIONS
from tests.convertproject import KINDS, SAMPLES, generate_project
from tests.exportproc import (
    CRD_PATH,
    ENV,
    WebhookTLS,
    apiforge,
    assert_unchanged,
    established,
    external_name_service,
    running_webhook,
    trusting,
    webhook_tls,
)
from tests.exportproc import export as export_as
from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import REPO, ServerProcess, free_port
from tests.shipped import shipped_definitions

SERVICE = "moves-conversion"
NAMESPACE = "default"
REVIEW = "apiextensions.k8s.io/v1"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_project(tmp_path_factory.mktemp("convertproject"))


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> WebhookTLS:
    """The webhook's certificate (for ``<service>.<namespace>.svc``, as kube verifies it), key and CA."""
    return webhook_tls(tmp_path_factory.mktemp("webhook-tls"), f"{SERVICE}.{NAMESPACE}.svc")


@pytest.fixture(scope="module")
def webhook(project: Path, tls: WebhookTLS) -> Iterator[int]:
    """`apiforge conversion-webhook` of the project, up; its port."""
    with running_webhook(project, tls) as port:
        yield port


@pytest.fixture(scope="module")
def moves_server(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """The generated server of the convert project: what the webhook's conversions must equal."""
    process = ServerProcess(tmp_path_factory.mktemp("moves-data"), free_port(), cwd=project)
    process.start(extra_env=ENV)
    yield process
    process.stop()


def export(definitions: Path, out: Path, port: int, ca_file: Path) -> list[Path]:
    return export_as(definitions, out, SERVICE, NAMESPACE, port, ca_file)


def kubectl(server: ServerProcess, cache: Path) -> Kubectl:
    return Kubectl(kubectl_binary(33), server.kubeconfig, cache)


@pytest.fixture(scope="module")
def moves_crds(
    server: ServerProcess,
    client: httpx.Client,
    webhook: int,
    tls: WebhookTLS,
    tmp_path_factory: pytest.TempPathFactory,
) -> list[Path]:
    """The convert project's CRDs, POSTed to the repository's server beside the Service that names the
    webhook (an ExternalName Service naming localhost: kube's Service resolution, no cluster)."""
    files = export(MOVES_DEFINITIONS, tmp_path_factory.mktemp("moves-crds"), webhook, tls.ca_file)
    service = external_name_service(SERVICE, NAMESPACE)
    assert client.post(f"/api/v1/namespaces/{NAMESPACE}/services", json=service).status_code == 201
    for file in files:
        answer = client.post(CRD_PATH, json=yaml.safe_load(file.read_text()))
        assert answer.status_code == 201, answer.text
    established(kubectl(server, tmp_path_factory.mktemp("cache")), files)
    return files


def test_the_project_crds_are_applied_by_kubectl_and_established(
    moves_server: ServerProcess, tls: WebhookTLS, tmp_path: Path
) -> None:
    files = export(shipped_definitions(), tmp_path / "crds", 443, tls.ca_file)
    assert [f.name for f in files] == [
        "platform.example.com_computeclusters.yaml",
        "stable.example.com_crontabs.yaml",
    ]
    tool = kubectl(moves_server, tmp_path / "cache")
    tool.run("apply", *(f"--filename={f}" for f in files))
    established(tool, files)
    with moves_server.client(timeout=10) as http:
        assert_unchanged(http, files)
        # served in its storage version (the other converts through the project's webhook)
        created = http.post(
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            json={
                "apiVersion": "stable.example.com/v1",
                "kind": "CronTab",
                "metadata": {"name": "nightly"},
                "spec": {"cronSpec": "0 3 * * *", "image": "backup", "replicas": 2},
            },
        )
        assert created.status_code == 201, created.text
    rows = tool.run("get", "ct", "nightly", "--output=wide").stdout.splitlines()
    assert [row.split()[:4] for row in rows] == [
        ["NAME", "SPEC", "REPLICAS", "IMAGE"],
        ["nightly", "0", "3", "*"],
    ]


def console_example(document: Path) -> tuple[list[str], list[str]]:
    """The first ``console`` block of a Markdown document: its command's arguments and its output."""
    block = document.read_text().split("```console\n", 1)[1].split("```", 1)[0]
    command, *output = block.splitlines()
    return shlex.split(command.removeprefix("$ ")), output


def test_the_documented_example_writes_what_it_shows(tls: WebhookTLS, tmp_path: Path) -> None:
    (program, *args), output = console_example(REPO / "docs" / "export.md")
    assert program == "apiforge"
    shutil.copytree(shipped_definitions(), tmp_path / "definitions")
    shutil.copy(tls.ca_file, tmp_path / "ca.crt")
    assert apiforge(*args, cwd=tmp_path).stdout.splitlines() == output
    crontabs = yaml.safe_load((tmp_path / "crds" / "stable.example.com_crontabs.yaml").read_text())
    client_config = crontabs["spec"]["conversion"]["webhook"]["clientConfig"]
    assert base64.b64decode(client_config["caBundle"]) == tls.ca_file.read_bytes()
    assert client_config["service"]["name"] == "apiforge-conversion-webhook"
    deployment, service = yaml.safe_load_all(
        (tmp_path / "crds" / "conversion-webhook.yaml").read_text()
    )
    assert (deployment["kind"], service["kind"]) == ("Deployment", "Service")
    wired = client_config["service"]
    assert service["metadata"] == {"name": wired["name"], "namespace": wired["namespace"]}
    (port,) = service["spec"]["ports"]
    assert port["port"] == wired["port"]
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["ports"][0]["containerPort"] == port["targetPort"]
    assert container["command"] == ["apiforge", "conversion-webhook"]


def test_the_exported_crontab_carries_what_its_definition_declares(
    tls: WebhookTLS, tmp_path: Path
) -> None:
    (file,) = [
        f for f in export(shipped_definitions(), tmp_path, 443, tls.ca_file) if "crontabs" in f.name
    ]
    spec = yaml.safe_load(file.read_text())["spec"]
    assert spec["names"]["shortNames"] == ["ct"]
    assert spec["names"]["categories"] == ["all"]
    v1, v1beta1 = spec["versions"]
    assert (v1["storage"], v1beta1["storage"], v1beta1["deprecated"]) == (True, False, True)
    assert v1["subresources"]["scale"]["labelSelectorPath"] == ".status.labelSelector"
    assert [c["name"] for c in v1["additionalPrinterColumns"]] == [
        "Spec",
        "Replicas",
        "Image",
        "Age",
    ]
    replicas = v1beta1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]
    assert replicas == {"type": "integer", "minimum": 0, "default": 1}
    conditions = v1["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["conditions"]
    assert (conditions["x-kubernetes-list-type"], conditions["x-kubernetes-list-map-keys"]) == (
        "map",
        ["type"],
    )
    webhook = spec["conversion"]["webhook"]
    assert webhook["clientConfig"]["service"] == {
        "namespace": NAMESPACE,
        "name": SERVICE,
        "path": "/convert",
        "port": 443,
    }
    assert (tmp_path / "conversion-webhook.yaml").exists()


def test_the_convert_project_crds_are_posted_unchanged_and_established(
    client: httpx.Client, moves_crds: list[Path]
) -> None:
    assert [f.name for f in moves_crds] == [
        "moves.example.com_orders.yaml",
        "moves.example.com_parcels.yaml",
        "moves.example.com_tickets.yaml",
    ]
    assert_unchanged(client, moves_crds)


def collection(plural: str, version: str) -> str:
    return f"/apis/moves.example.com/{version}/namespaces/default/{plural}"


@pytest.mark.parametrize(
    ("plural", "written", "body", "versions"),
    SAMPLES,
    ids=[f"{plural}-{version}" for plural, version, _, _ in SAMPLES],
)
def test_an_object_reads_back_in_every_version_through_the_webhook(
    client: httpx.Client,
    moves_crds: list[Path],
    moves_server: ServerProcess,
    plural: str,
    written: str,
    body: dict[str, Any],
    versions: tuple[str, ...],
) -> None:
    name = f"{plural}-from-{written}"
    obj = {
        "apiVersion": f"moves.example.com/{written}",
        "kind": KINDS[plural],
        "metadata": {"name": name},
        **body,
    }
    with moves_server.client(timeout=10) as generated:
        for http in (client, generated):
            created = http.post(collection(plural, written), json=obj)
            assert created.status_code == 201, created.text
        for version in versions:
            expected = generated.get(f"{collection(plural, version)}/{name}").json()
            read = client.get(f"{collection(plural, version)}/{name}")
            assert read.status_code == 200, read.text
            got = read.json()
            assert (got["apiVersion"], got["kind"]) == (expected["apiVersion"], expected["kind"])
            assert got["spec"] == expected["spec"], version


def review(objects: Any, desired: str = "moves.example.com/v2", **request: Any) -> Any:
    return {
        "apiVersion": REVIEW,
        "kind": "ConversionReview",
        "request": {"uid": "u-1", "desiredAPIVersion": desired, "objects": objects, **request},
    }


ORDER_V1 = {
    "apiVersion": "moves.example.com/v1",
    "kind": "Order",
    "metadata": {"name": "o", "namespace": "default", "uid": "o-uid"},
    "spec": {"customerName": "Ada", "city": "Lyon", "total": 1},
}
BAD_REQUESTS = [
    ("undecodable", b"{not json", "application/json", "failed to deserialize body"),
    ("not-an-object", b"[1, 2]", "application/json", "failed to deserialize body"),
    ("yaml", b"kind: ConversionReview", "application/yaml", "invalid Content-Type header"),
    (
        "admission-review",
        b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}',
        "application/json",
        "Unsupported group version kind: admission.k8s.io/v1, Kind=AdmissionReview",
    ),
    (
        "no-request",
        b'{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}',
        "application/json",
        "conversion request is nil",
    ),
]


@pytest.fixture(scope="module")
def webhook_client(webhook: int, tls: WebhookTLS) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"https://127.0.0.1:{webhook}", verify=trusting(tls.ca_file)
    ) as http:
        yield http


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [case[1:] for case in BAD_REQUESTS],
    ids=[case[0] for case in BAD_REQUESTS],
)
def test_what_is_not_a_conversion_review_is_a_400(
    webhook_client: httpx.Client, body: bytes, content_type: str, message: str
) -> None:
    answer = webhook_client.post("/convert", content=body, headers={"Content-Type": content_type})
    assert answer.status_code == 400
    assert message in answer.text


FAILURES = [
    ("missing-uid", review([ORDER_V1], uid=""), "the conversion request has no uid"),
    ("no-desired-version", review([ORDER_V1], desired=""), "has no desiredAPIVersion"),
    ("objects-not-a-list", review({"a": 1}), "objects are not a list"),
    (
        "kind-of-another-project",
        review([{**ORDER_V1, "kind": "Invoice"}]),
        "no kind \"Invoice\" in group 'moves.example.com'",
    ),
    (
        "built-in-kind",
        review([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}], desired="v1"),
        "no kind \"ConfigMap\" in group ''",
    ),
    (
        "another-group",
        review([ORDER_V1], desired="stable.example.com/v1"),
        "different groups",
    ),
    ("unknown-version", review([ORDER_V1], desired="moves.example.com/v9"), "no version"),
    ("object-not-an-object", review(["order"]), "not a JSON object"),
    (
        "hook-fails",
        review(
            [
                {
                    "apiVersion": "moves.example.com/v1alpha1",
                    "kind": "Ticket",
                    "metadata": {"name": "t"},
                    "spec": {"level": "high"},
                }
            ],
            desired="moves.example.com/v1",
        ),
        "conversion failed: invalid literal for int()",
    ),
]


@pytest.mark.parametrize(
    ("body", "message"), [case[1:] for case in FAILURES], ids=[case[0] for case in FAILURES]
)
def test_a_review_that_cannot_be_converted_is_a_failure_result(
    webhook_client: httpx.Client, body: dict[str, Any], message: str
) -> None:
    answer = webhook_client.post("/convert", json=body)
    assert answer.status_code == 200
    assert answer.json()["apiVersion"] == REVIEW
    response = answer.json()["response"]
    assert response["uid"] == body["request"]["uid"]
    assert response["result"]["status"] == "Failure"
    assert message in response["result"]["message"]
    assert "convertedObjects" not in response


@pytest.mark.parametrize("review_version", ["v1", "v1beta1"])
def test_a_review_converts_in_either_review_version(
    webhook_client: httpx.Client, review_version: str
) -> None:
    body = {**review([ORDER_V1]), "apiVersion": f"apiextensions.k8s.io/{review_version}"}
    answer = webhook_client.post("/convert", json=body).json()
    assert answer["apiVersion"] == f"apiextensions.k8s.io/{review_version}"
    assert answer["response"]["uid"] == "u-1"
    assert answer["response"]["result"] == {"status": "Success"}
    (converted,) = answer["response"]["convertedObjects"]
    assert converted["apiVersion"] == "moves.example.com/v2"
    assert converted["metadata"] == ORDER_V1["metadata"]
    assert converted["spec"] == {
        "customer": {"name": "Ada", "address": {"city": "Lyon"}},
        "total": 1,
    }


def test_unknown_paths_are_404(webhook_client: httpx.Client) -> None:
    assert webhook_client.get("/convert").status_code == 404
    assert webhook_client.post("/healthz", json={}).status_code == 404


def webhook_failure(certificate: Path, key: Path, port: int) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "apiforge", "conversion-webhook", "--bind-address=127.0.0.1"]
    command += [f"--tls-cert-file={certificate}", f"--tls-private-key-file={key}", f"--port={port}"]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)


def test_a_webhook_without_a_usable_certificate_says_so(tls: WebhookTLS, tmp_path: Path) -> None:
    """A key that is not PEM: one line, exit 1, as `apiforge serve` fails to start."""
    (tmp_path / "tls.key").write_text("not a key\n")
    failed = webhook_failure(tls.certificate, tmp_path / "tls.key", free_port())
    assert failed.returncode == 1
    assert failed.stderr.startswith(
        f"Error: cannot load {tls.certificate} and {tmp_path / 'tls.key'}: "
    )
    assert "Traceback" not in failed.stderr


def test_a_webhook_on_a_taken_port_says_so(tls: WebhookTLS) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failed = webhook_failure(tls.certificate, tls.key, port)
    assert failed.returncode == 1
    assert failed.stderr == (
        f"Error: failed to listen on 127.0.0.1:{port}: bind: address already in use\n"
    )


@pytest.mark.parametrize("minor", [27, 33], ids=lambda minor: f"kubectl-1.{minor}")
def test_kubectl_reads_an_applied_object_in_every_version_through_the_webhook(
    server: ServerProcess,
    moves_server: ServerProcess,
    moves_crds: list[Path],
    minor: int,
    tmp_path: Path,
) -> None:
    name = f"applied-1-{minor}"
    manifest = yaml.safe_dump(
        {
            "apiVersion": "moves.example.com/v1",
            "kind": "Order",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"customerName": "Di", "city": "Kyiv", "total": 4},
        }
    )
    tools = [
        Kubectl(kubectl_binary(minor), process.kubeconfig, tmp_path / f"cache-{index}")
        for index, process in enumerate((server, moves_server))
    ]
    for tool in tools:
        tool.run("apply", "--filename=-", stdin=manifest)
    for version in ("v1", "v1beta1", "v2"):
        through_webhook, generated = (
            yaml.safe_load(
                tool.run("get", f"orders.{version}.moves.example.com", name, "--output=yaml").stdout
            )
            for tool in tools
        )
        assert through_webhook["apiVersion"] == f"moves.example.com/{version}"
        assert through_webhook["spec"] == generated["spec"], version
