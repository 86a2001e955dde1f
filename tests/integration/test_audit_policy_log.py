"""The audit log of a real `apiforge serve` with `--audit-policy-file` (the example policy of docs/, which
keeps secret contents out) and `--audit-log-path`: one line per stage per request with kube's fields, the
objects by level, impersonation, the Audit-Id header on every answer; rotation at `--audit-log-maxsize` with
`--audit-log-maxbackup`; and a broken policy file failing the start with its path and the problem."""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.auditlog import audited_server
from tests.serverproc import CA_FILE, REPO, ServerProcess, free_port

pytestmark = pytest.mark.timeout(120)
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
SECRETS = "/api/v1/namespaces/default/secrets"
SECRET_VALUE = "czNjcjN0LXBhc3N3b3Jk"  # base64 of s3cr3t-password
BACKUP = re.compile(r"audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\Z")


def client_of(server: ServerProcess) -> httpx.Client:
    """The harness's own client when it has one (it may speak TLS with a client certificate), else a plain
    one to its URL."""
    make = getattr(server, "client", None)
    if callable(make):
        client: httpx.Client = make()
        return client
    return httpx.Client(base_url=server.url, timeout=20)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    work = tmp_path_factory.mktemp("audit")
    with audited_server(
        work,
        "--audit-policy-file",
        str(REPO / "docs" / "audit-policy.yaml"),
        "--audit-log-path",
        str(work / "logs" / "audit.log"),
        "--audit-log-maxsize",
        "1",
        "--audit-log-maxbackup",
        "2",
    ) as process:
        yield process


def log_path(server: ServerProcess) -> Path:
    return server.data_dir.parent / "logs" / "audit.log"


def events_of(server: ServerProcess, audit_id: str) -> list[dict[str, Any]]:
    """Every event of one request, from the log and its rotated files."""
    directory = log_path(server).parent
    found = []
    for path in sorted(directory.iterdir()):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["auditID"] == audit_id:
                found.append(event)
    return found


def crontab(name: str, **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, **({"annotations": annotations} if annotations else {})},
        "spec": {"cronSpec": "*/5 * * * *", "image": "busybox"},
    }


def test_a_write_is_one_line_per_stage_with_kube_s_fields(server: ServerProcess) -> None:
    body = crontab("web")
    with client_of(server) as client:
        response = client.post(
            f"{CRONTABS}?fieldManager=tester", json=body, headers={"User-Agent": "audit-test/1.0"}
        )
    assert response.status_code == 201
    # RequestReceived is omitted by the policy: the one stage of a short request is ResponseComplete
    [event] = events_of(server, response.headers["audit-id"])
    assert event["stage"] == "ResponseComplete"
    assert (event["level"], event["verb"], event["userAgent"]) == (
        "RequestResponse",
        "create",
        "audit-test/1.0",
    )
    assert event["requestURI"] == f"{CRONTABS}?fieldManager=tester"
    assert event["user"]["username"]
    # the create's name comes from its body (k8s.io/apiserver pkg/audit/request.go LogRequestObject)
    assert event["objectRef"] == {
        "resource": "crontabs",
        "namespace": "default",
        "name": body["metadata"]["name"],
        "apiGroup": "stable.example.com",
        "apiVersion": "v1",
    }
    assert event["responseStatus"] == {"metadata": {}, "code": 201}
    assert event["requestObject"] == body
    assert event["responseObject"]["metadata"]["uid"] == response.json()["metadata"]["uid"]
    assert "managedFields" not in event["responseObject"]["metadata"]  # omitManagedFields: true
    assert event["requestReceivedTimestamp"] <= event["stageTimestamp"]


def test_impersonation_is_recorded(server: ServerProcess) -> None:
    with client_of(server) as client:
        response = client.get(
            f"{CRONTABS}/web",
            headers=[("Impersonate-User", "jane"), ("Impersonate-Group", "auditors")],
        )
    [event] = events_of(server, response.headers["audit-id"])
    assert event["impersonatedUser"] == {
        "username": "jane",
        "groups": ["auditors", "system:authenticated"],
    }
    assert event["user"]["username"] != "jane"
    assert event["level"] == "Metadata"  # reads are Metadata in the example policy
    assert event["objectRef"]["name"] == "web"


def test_secret_contents_never_reach_the_log(server: ServerProcess) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "data": {"password": SECRET_VALUE},
    }
    with client_of(server) as client:
        created = client.post(SECRETS, json=secret)
        patched = client.patch(
            f"{SECRETS}/db",
            json={"stringData": {"other": "pl41n-t3xt"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
    assert (created.status_code, patched.status_code) == (201, 200)
    for response in (created, patched):
        [event] = events_of(server, response.headers["audit-id"])
        assert event["level"] == "Metadata"
        assert "requestObject" not in event and "responseObject" not in event
    text = "".join(path.read_text() for path in log_path(server).parent.iterdir())
    assert SECRET_VALUE not in text
    assert "pl41n-t3xt" not in text


def test_errors_and_unrecorded_requests_carry_an_audit_id(server: ServerProcess) -> None:
    with client_of(server) as client:
        missing = client.delete(f"{CRONTABS}/missing")
        bad = client.get(f"{CONFIGMAPS}?timeout=soon")
        ready = client.get("/readyz")  # level None in the policy: not recorded, still identified
        mine = client.get("/version", headers={"Audit-ID": "from-the-client"})
    assert (missing.status_code, bad.status_code, ready.status_code) == (404, 400, 200)
    [not_found] = events_of(server, missing.headers["audit-id"])
    assert not_found["responseStatus"]["reason"] == "NotFound"
    assert not_found["responseObject"] == missing.json()  # RequestResponse: the Status answered
    [refused] = events_of(server, bad.headers["audit-id"])
    assert refused["responseStatus"]["code"] == 400
    assert ready.headers["audit-id"]
    assert events_of(server, ready.headers["audit-id"]) == []
    assert mine.headers["audit-id"] == "from-the-client"


def test_the_log_rotates_at_max_size_and_keeps_max_backup(server: ServerProcess) -> None:
    """--audit-log-maxsize 1 (MB), --audit-log-maxbackup 2: ~300 KB events, so a dozen writes rotate
    several times; the two newest rotated files stay, each under 1 MiB, every line whole."""
    directory = log_path(server).parent
    ids = []
    with client_of(server) as client:
        for index in range(12):
            body = crontab(f"big-{index}", blob="x" * 150_000)
            response = client.post(CRONTABS, json=body)
            assert response.status_code == 201
            ids.append(response.headers["audit-id"])
    rotated = sorted(path.name for path in directory.iterdir() if path.name != "audit.log")
    assert len(rotated) == 2, rotated
    assert all(BACKUP.match(name) for name in rotated), rotated
    for path in directory.iterdir():
        assert path.stat().st_size <= 1024 * 1024
        assert path.stat().st_mode & 0o777 == 0o600
        for line in path.read_text().splitlines():
            json.loads(line)
    # the newest events survive rotation whole; the oldest went with the removed files
    assert events_of(server, ids[-1])[0]["requestObject"]["metadata"]["name"] == "big-11"
    assert events_of(server, ids[0]) == []


def test_a_broken_policy_file_fails_the_start(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "apiforge",
            "serve",
            "--data-dir",
            str(tmp_path / "data"),
            "--port",
            str(free_port()),
            "--storage",
            "memory",
            "--audit-policy-file",
            str(policy),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert (
        'loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values:'
        in result.stderr
    )
    assert f"from file {policy}" in result.stderr.replace("\n", " ") or str(policy) in result.stderr


def test_an_rbac_refusal_is_recorded_and_identified(tmp_path: Path) -> None:
    """An anonymous client (no certificate) under --authorization-mode RBAC: its 403 carries an Audit-Id
    and is recorded with kube's Status and the authorizer's decision; /version (readable by all, level None
    in the policy) is identified but not recorded."""
    log = tmp_path / "audit.log"
    policy = str(REPO / "docs" / "audit-policy.yaml")
    flags = (
        "--authorization-mode",
        "RBAC",
        "--audit-policy-file",
        policy,
        "--audit-log-path",
        str(log),
    )
    with audited_server(tmp_path, *flags) as server:
        verify = (
            ssl.create_default_context(cafile=server.data_dir / CA_FILE) if server.secure else True
        )
        with httpx.Client(base_url=server.url, verify=verify, timeout=20) as anonymous:
            refused = anonymous.get("/api/v1/namespaces")
            version = anonymous.get("/version")
        events = [json.loads(line) for line in log.read_text().splitlines()]
    assert (refused.status_code, version.status_code) == (403, 200)
    [event] = [event for event in events if event["auditID"] == refused.headers["audit-id"]]
    assert event["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    assert event["responseStatus"]["code"] == 403
    assert event["responseStatus"]["reason"] == "Forbidden"
    assert event["responseStatus"]["message"] == refused.json()["message"]
    assert event["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert version.headers["audit-id"]
    assert not any(event["auditID"] == version.headers["audit-id"] for event in events)
