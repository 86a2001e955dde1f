"""The JSON-lines audit log (`--audit-log-path`): one audit.k8s.io/v1 Event per line, appended, readable by
anything that reads kube-apiserver's audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiserver.audit.event import Event, Level, Stage, micro_time
from apiserver.audit.log import LogBackend
from apiserver.audit.options import LogOptions
from apiserver.authentication.user import ANONYMOUS, UserInfo


def event(audit_id: str) -> Event:
    return Event(
        Level.METADATA,
        audit_id,
        "/api/v1/namespaces/default/configmaps",
        "create",
        ANONYMOUS,
        ("10.0.0.7",),
        "",
        1_700_000_000.25,
        {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
        stage_time=1_700_000_000.5,
    )


def test_micro_time_is_rfc3339_with_microseconds_in_utc() -> None:
    assert micro_time(1_700_000_000.25) == "2023-11-14T22:13:20.250000Z"


def test_events_are_appended_one_per_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    path.write_text('{"kind":"Event","auditID":"earlier"}\n')
    backend = LogBackend(str(path))
    first = event("a")
    backend.process_events(first)
    first.stage = Stage.RESPONSE_COMPLETE
    first.impersonated_user = UserInfo("jane", groups=("system:authenticated",))
    first.response_status = {"metadata": {}, "code": 201}
    backend.process_events(first, event("b"))
    backend.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["auditID"] for line in lines] == ["earlier", "a", "a", "b"]
    assert lines[1] == {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": "a",
        "stage": "RequestReceived",
        "requestURI": "/api/v1/namespaces/default/configmaps",
        "verb": "create",
        "user": {"username": "system:anonymous", "groups": ["system:unauthenticated"]},
        "sourceIPs": ["10.0.0.7"],
        "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
        "requestReceivedTimestamp": "2023-11-14T22:13:20.250000Z",
        "stageTimestamp": "2023-11-14T22:13:20.500000Z",
    }
    assert lines[2]["stage"] == "ResponseComplete"
    assert lines[2]["impersonatedUser"] == {"username": "jane", "groups": ["system:authenticated"]}
    assert lines[2]["responseStatus"] == {"metadata": {}, "code": 201}


def test_a_dash_is_standard_output(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    backend = LogBackend("-")
    backend.process_events(event("to-stdout"))
    backend.close()
    assert json.loads(capsysbinary.readouterr().out)["auditID"] == "to-stdout"


def test_a_new_log_is_created_0600_in_a_0700_directory(tmp_path: Path) -> None:
    """kube's ensureLogFile: the log tells who did what, and is nobody else's to read."""
    path = tmp_path / "logs" / "audit.log"
    LogBackend(str(path)).close()
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def test_the_legacy_format_is_kube_s_event_string(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    backend = LogBackend(LogOptions(str(path), format="legacy"))
    first = event("a")
    backend.process_events(first)
    first.stage = Stage.RESPONSE_COMPLETE
    first.user = UserInfo("alice", groups=("devs", "system:authenticated"))
    first.impersonated_user = UserInfo("jane")
    first.user_agent = 'kubectl/v1.33 "quoted"'
    first.response_status = {"metadata": {}, "code": 201}
    backend.process_events(first)
    backend.close()
    received, complete = path.read_text().splitlines()
    assert received == (
        '2023-11-14T22:13:20.250000Z AUDIT: id="a" stage="RequestReceived" ip="10.0.0.7"'
        ' method="create" user="system:anonymous" groups="\\"system:unauthenticated\\""'
        ' as="<self>" asgroups="<lookup>" user-agent="" namespace="default"'
        ' uri="/api/v1/namespaces/default/configmaps" response="<deferred>"'
    )
    assert complete == (
        '2023-11-14T22:13:20.250000Z AUDIT: id="a" stage="ResponseComplete" ip="10.0.0.7"'
        ' method="create" user="alice" groups="\\"devs\\",\\"system:authenticated\\""'
        ' as="jane" asgroups="<lookup>" user-agent="kubectl/v1.33 \\"quoted\\""'
        ' namespace="default" uri="/api/v1/namespaces/default/configmaps" response="201"'
    )


def test_truncation_drops_the_objects_then_the_event(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """kube's truncating backend: past the maximum event size the objects go and the event says so; an
    event still too large is dropped (and logged)."""
    path = tmp_path / "audit.log"
    backend = LogBackend(LogOptions(str(path), max_event_size=2000))
    small, large, huge = event("small"), event("large"), event("huge")
    for recorded in (small, large, huge):
        recorded.level = Level.REQUEST_RESPONSE
        recorded.request_object = {"data": {"k": "v"}}
    large.response_object = {"data": {"k": "x" * 5000}}
    huge.annotations["note"] = "y" * 5000
    backend.process_events(small, large, huge)
    backend.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["auditID"] for line in lines] == ["small", "large"]
    assert lines[0]["requestObject"] == {"data": {"k": "v"}}
    assert "requestObject" not in lines[1]
    assert "responseObject" not in lines[1]
    assert lines[1]["annotations"] == {"audit.k8s.io/truncated": "true"}
    assert "audit event huge is too large even after truncating" in caplog.text
