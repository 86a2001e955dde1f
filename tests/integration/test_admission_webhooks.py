"""Admission webhooks through a real server and a real TLS webhook (tests/webhookserver.py): validating and
mutating configurations deny and patch CronTabs with kube's messages; failurePolicy with the webhook down,
timeouts, dry run and side effects, and webhooks that answer garbage or an invalid patch (k8s.io/apiserver
pkg/admission/plugin/webhook: ToStatusErr, ErrCallingWebhook, NewDryRunUnsupportedErr)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.serverproc import REPO, ServerProcess, free_port
from tests.webhookserver import WebhookServer, webhook_server

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    with webhook_server(tmp_path_factory.mktemp("webhook")) as server:
        yield server


def crontab(label: str, replicas: int = 1, name: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name or f"ct-{uuid.uuid4().hex[:8]}", "labels": {"test": label}},
        "spec": {"cronSpec": "* * * * */5", "image": "busybox", "replicas": replicas},
    }


def configure(
    client: httpx.Client,
    hooks: WebhookServer,
    kind: str,
    path: str,
    label: str,
    **options: Any,
) -> str:
    """A configuration of one webhook on CronTab writes labelled test=<label>; returns its name once the
    server calls the webhook (the plugins learn of configurations through a watch)."""
    name = f"{label}.hooks.example.com"
    url = options.pop("url", None) or hooks.url(path)
    webhook = {
        "name": name,
        "clientConfig": {"url": url, "caBundle": hooks.ca_bundle},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": ["stable.example.com"],
                "apiVersions": ["*"],
                "resources": ["crontabs"],
            }
        ],
        "objectSelector": {"matchLabels": {"test": label}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **options,
    }
    plural = (
        "validatingwebhookconfigurations"
        if kind == "Validating"
        else "mutatingwebhookconfigurations"
    )
    created = client.post(
        f"{ADMISSION}/{plural}",
        json={
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": f"{kind}WebhookConfiguration",
            "metadata": {"name": label},
            "webhooks": [webhook],
        },
    )
    assert created.status_code == 201, created.text
    return name


def active(client: httpx.Client, label: str, seen: int, hooks: WebhookServer) -> None:
    """Wait until the webhook of ``label`` is called (dry-run creates, which store nothing)."""
    deadline = time.monotonic() + 10
    while len(hooks.reviews) == seen:
        assert time.monotonic() < deadline, "the webhook was never called"
        client.post(CRONTABS, params={"dryRun": "All"}, json=crontab(label))
        time.sleep(0.02)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp("data")
    audit = ("--audit-policy-file", str(REPO / "docs" / "audit-policy.yaml"))
    audit += ("--audit-log-path", str(data / "audit.log"))
    # Services given loopback cluster IPs, so that a Service can lead to a webhook on this machine
    audit += ("--service-cluster-ip-range", "127.0.0.0/24")
    process = ServerProcess(data, free_port(), extra_args=audit)
    process.start()
    yield process
    process.stop()


def enforced(
    client: httpx.Client, hooks: WebhookServer, kind: str, path: str, **options: Any
) -> str:
    label = f"t{uuid.uuid4().hex[:10]}"
    seen = len(hooks.reviews)
    configure(client, hooks, kind, path, label, **options)
    active(client, label, seen, hooks)
    return label


def test_validating_webhook_denies_with_kubes_message(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    label = enforced(client, hooks, "Validating", "/deny")
    response = client.post(CRONTABS, json=crontab(label))
    assert response.status_code == 403
    status = response.json()
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        f'admission webhook "{label}.hooks.example.com" denied the request: no crontabs on mondays'
    )
    review = hooks.reviews[-1]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    request = review["request"]
    assert request["operation"] == "CREATE"
    assert request["resource"] == {
        "group": "stable.example.com",
        "version": "v1",
        "resource": "crontabs",
    }
    assert request["object"]["spec"]["image"] == "busybox"
    assert request["userInfo"]["username"]
    assert client.get(f"{CRONTABS}/{request['name']}").status_code == 404


def test_denial_without_message_says_without_explanation(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    label = enforced(client, hooks, "Validating", "/deny-silent")
    response = client.post(CRONTABS, json=crontab(label))
    assert response.status_code == 400
    assert response.json()["message"] == (
        f'admission webhook "{label}.hooks.example.com" denied the request without explanation'
    )


def test_unselected_objects_are_not_sent(client: httpx.Client, hooks: WebhookServer) -> None:
    enforced(client, hooks, "Validating", "/deny")
    seen = len(hooks.reviews)
    response = client.post(CRONTABS, json=crontab("someone-else"))
    assert response.status_code == 201, response.text
    assert len(hooks.reviews) == seen


def test_mutating_webhook_patches_the_object(client: httpx.Client, hooks: WebhookServer) -> None:
    label = enforced(client, hooks, "Mutating", "/patch")
    response = client.post(CRONTABS, json=crontab(label))
    assert response.status_code == 201, response.text
    # the patch replaced the labels: the object selector no longer matches what was stored
    assert response.json()["metadata"]["labels"] == {"patched": "yes"}


def test_a_patch_the_schema_refuses_is_invalid(client: httpx.Client, hooks: WebhookServer) -> None:
    label = enforced(client, hooks, "Mutating", "/patch-invalid")
    ct = crontab(label)
    response = client.post(CRONTABS, json=ct)
    assert response.status_code == 422, response.text
    assert client.get(f"{CRONTABS}/{ct['metadata']['name']}").status_code == 404


def test_warnings_and_audit_annotations_are_passed_through(
    client: httpx.Client, hooks: WebhookServer, server: ServerProcess
) -> None:
    label = enforced(client, hooks, "Validating", "/warn")
    ct = crontab(label)
    response = client.post(CRONTABS, json=ct)
    assert response.status_code == 201, response.text
    assert response.headers["warning"] == '299 - "think twice"'
    events = [json.loads(line) for line in (server.data_dir / "audit.log").read_text().splitlines()]
    created = [
        e
        for e in events
        if e["verb"] == "create" and e.get("objectRef", {}).get("name") == ct["metadata"]["name"]
    ]
    # kube keys a webhook's audit annotation by the webhook's name
    assert created[-1]["annotations"][f"{label}.hooks.example.com/checked"] == "yes"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/garbage", "failed to call webhook: "),
        ("/wronguid", 'received invalid webhook response: expected response.uid="'),
    ],
)
def test_garbage_answers_fail_closed(
    client: httpx.Client, hooks: WebhookServer, path: str, reason: str
) -> None:
    label = f"t{uuid.uuid4().hex[:10]}"
    configure(client, hooks, "Validating", path, label)
    deadline = time.monotonic() + 10
    while True:
        ct = crontab(label)
        response = client.post(CRONTABS, json=ct)
        if response.status_code != 201 or time.monotonic() > deadline:
            break
    # kube answers a webhook it cannot use with failurePolicy Fail as an internal error
    assert response.status_code == 500
    message = response.json()["message"]
    assert message.startswith(
        f'Internal error occurred: failed calling webhook "{label}.hooks.example.com": {reason}'
    )
    assert client.get(f"{CRONTABS}/{ct['metadata']['name']}").status_code == 404


def test_an_undecodable_patch_is_refused(client: httpx.Client, hooks: WebhookServer) -> None:
    label = enforced(client, hooks, "Mutating", "/badpatch")
    ct = crontab(label)
    response = client.post(CRONTABS, json=ct)
    assert response.status_code == 500
    assert "returned an invalid patch" in response.json()["message"]
    assert client.get(f"{CRONTABS}/{ct['metadata']['name']}").status_code == 404


def test_failure_policy_with_the_webhook_down(client: httpx.Client, hooks: WebhookServer) -> None:
    down = f"https://127.0.0.1:{free_port()}/deny"
    fail = f"t{uuid.uuid4().hex[:10]}"
    configure(client, hooks, "Validating", "", fail, url=down, failurePolicy="Fail")
    ignore = f"t{uuid.uuid4().hex[:10]}"
    configure(client, hooks, "Validating", "", ignore, url=down, failurePolicy="Ignore")
    deadline = time.monotonic() + 10
    while (response := client.post(CRONTABS, json=crontab(fail))).status_code == 201:
        assert time.monotonic() < deadline
    assert response.status_code == 500
    assert response.json()["message"] == (
        f'Internal error occurred: failed calling webhook "{fail}.hooks.example.com": failed to call '
        f'webhook: Post "{down}?timeout=10s": dial tcp 127.0.0.1:{down.split(":")[2].split("/")[0]}: '
        "connect: connection refused"
    )
    assert client.post(CRONTABS, json=crontab(ignore)).status_code == 201


def test_timeout_is_honoured(client: httpx.Client, hooks: WebhookServer) -> None:
    label = f"t{uuid.uuid4().hex[:10]}"
    configure(client, hooks, "Validating", "/hang", label, timeoutSeconds=1)
    deadline = time.monotonic() + 10
    while True:
        started = time.monotonic()
        response = client.post(CRONTABS, json=crontab(label))
        took = time.monotonic() - started
        if response.status_code != 201 or time.monotonic() > deadline:
            break
    assert response.status_code == 500
    assert response.json()["message"].endswith('/hang?timeout=1s": context deadline exceeded')
    assert 0.9 < took < 5


def test_dry_run_reaches_webhooks_declared_free_of_side_effects(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    """v1 admits only sideEffects None and NoneOnDryRun (kube refuses Unknown and Some, v1beta1's), so
    every v1 webhook may be sent a dry run; it is told so by request.dryRun."""
    label = enforced(client, hooks, "Validating", "/allow", sideEffects="NoneOnDryRun")
    assert hooks.reviews[-1]["request"]["dryRun"] is True
    assert hooks.reviews[-1]["request"]["options"]["kind"] == "CreateOptions"
    response = client.patch(
        f"{ADMISSION}/validatingwebhookconfigurations/{label}",
        json=[{"op": "replace", "path": "/webhooks/0/sideEffects", "value": "Some"}],
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["message"] == (
        'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'
    )


def test_configuration_validation(client: httpx.Client, hooks: WebhookServer) -> None:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bad"},
        "webhooks": [
            {
                "name": "short",
                "clientConfig": {"url": "http://example.com/x"},
                "sideEffects": "None",
                "admissionReviewVersions": ["v2"],
                "matchConditions": [{"name": "c", "expression": "object.("}],
            }
        ],
    }
    response = client.post(f"{ADMISSION}/validatingwebhookconfigurations", json=body)
    assert response.status_code == 422
    fields = [cause["field"] for cause in response.json()["details"]["causes"]]
    assert fields == [
        "webhooks[0].name",
        "webhooks[0].clientConfig.url",
        "webhooks[0].admissionReviewVersions",
        "webhooks[0].matchConditions[0].expression",
    ]


def test_equivalent_match_policy_sends_the_version_the_webhook_asks_for(
    client: httpx.Client, hooks: WebhookServer
) -> None:
    """A webhook registered for v1beta1 only is sent a v1 write converted to v1beta1 (kube's
    matchPolicy Equivalent, the default): spec.cronSpec is v1beta1's spec.schedule; its patch, made in
    v1beta1, is converted back."""
    rules = [
        {
            "operations": ["CREATE"],
            "apiGroups": ["stable.example.com"],
            "apiVersions": ["v1beta1"],
            "resources": ["crontabs"],
        }
    ]
    label = enforced(client, hooks, "Mutating", "/patch", rules=rules)
    request = hooks.reviews[-1]["request"]
    assert request["kind"] == {
        "group": "stable.example.com",
        "version": "v1beta1",
        "kind": "CronTab",
    }
    assert request["requestKind"]["version"] == "v1"
    assert request["object"]["spec"]["schedule"] == "* * * * */5"
    assert "cronSpec" not in request["object"]["spec"]
    response = client.post(CRONTABS, json=crontab(label))
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["labels"] == {"patched": "yes"}
    assert response.json()["spec"]["cronSpec"] == "* * * * */5"


SERVICE_IP = "127.0.0.3"
"""The cluster IP of the Service in front of a webhook listening there (the kubernetes Service has
127.0.0.1, the aggregation tests use 127.0.0.2)."""


@pytest.fixture(scope="module")
def service_hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    """A webhook on the Service's cluster IP, whose certificate names ``hooks.default.svc`` and not the IP."""
    directory = tmp_path_factory.mktemp("service-webhook")
    with webhook_server(directory, SERVICE_IP, ("hooks.default.svc",)) as server:
        yield server


def service(client: httpx.Client, name: str, port: int, external: bool = False) -> None:
    """A Service on SERVICE_IP, or an ExternalName Service naming it."""
    spec: dict[str, Any] = {"clusterIP": SERVICE_IP, "ports": [{"port": port}]}
    if external:
        spec = {"type": "ExternalName", "externalName": SERVICE_IP}
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}
    assert client.post("/api/v1/namespaces/default/services", json=body).status_code == 201


def failing(client: httpx.Client, label: str) -> httpx.Response:
    """The answer to a CronTab write once the webhook of ``label`` is configured (and fails)."""
    deadline = time.monotonic() + 10
    while True:
        response = client.post(CRONTABS, params={"dryRun": "All"}, json=crontab(label))
        if response.status_code != 201 or time.monotonic() > deadline:
            return response
        time.sleep(0.02)


def test_a_service_reference_is_resolved_to_its_cluster_ip_and_verified_by_its_name(
    client: httpx.Client, service_hooks: WebhookServer
) -> None:
    """kube-apiserver resolves a webhook's Service to its cluster IP (kube-aggregator resolvers.go
    ResolveCluster) and verifies the certificate for <name>.<namespace>.svc (webhook config.go ServerName)."""
    port = service_hooks.port
    service(client, "hooks", port)
    reference = {"namespace": "default", "name": "hooks", "port": port, "path": "/deny"}
    config = {"service": reference, "caBundle": service_hooks.ca_bundle}
    label = enforced(client, service_hooks, "Validating", "/deny", clientConfig=config)
    response = client.post(CRONTABS, json=crontab(label))
    assert response.status_code == 403, response.text
    assert "denied the request: no crontabs on mondays" in response.json()["message"]

    # the same address behind another name (an ExternalName Service leads to its DNS name, here the
    # address): the certificate does not carry other.default.svc
    service(client, "other", port, external=True)
    label = f"t{uuid.uuid4().hex[:10]}"
    configure(client, service_hooks, "Validating", "/deny", label,
              clientConfig={**config, "service": {**reference, "name": "other"}})  # fmt: skip
    response = failing(client, label)
    assert response.status_code == 500, response.text
    assert response.json()["message"].startswith(
        f'Internal error occurred: failed calling webhook "{label}.hooks.example.com": '
        "failed to call webhook: Post "
        f'"https://other.default.svc:{port}/deny?timeout=10s": tls: failed to verify certificate: x509: '
    )

    # no such Service
    label = f"t{uuid.uuid4().hex[:10]}"
    configure(client, service_hooks, "Validating", "/deny", label,
              clientConfig={**config, "service": {**reference, "name": "missing"}})  # fmt: skip
    response = failing(client, label)
    assert response.status_code == 500, response.text
    assert response.json()["message"] == (
        f'Internal error occurred: failed calling webhook "{label}.hooks.example.com": '
        # kube resolves the Service when it dials (webhook ClientManager's Dial), so the REST client's
        # error quotes the Service's URL
        f'failed to call webhook: Post "https://missing.default.svc:{port}/deny?timeout=10s": '
        'service "missing" not found'
    )
