"""The JSON-lines audit log (`--audit-log-path`): one audit.k8s.io/v1 Event per line, appended, readable by
anything that reads kube-apiserver's audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiserver.audit.event import Event, Level, Stage, micro_time
from apiserver.audit.log import LogBackend
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
