"""The server's own writes in the audit log (apiserver/audit/internal.py): recorded as the request kube's
controller would make, judged by the same policy, with the write's status; nothing without a log."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.audit.event import Event
from apiserver.audit.internal import InternalAudit, Target
from apiserver.audit.policyfile import load_policy
from apiserver.authentication.user import UserInfo
from apiserver.machinery import errors

GC = UserInfo("system:serviceaccount:kube-system:generic-garbage-collector")
POLICY = b"""
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Request
  verbs: ["delete"]
  users: ["system:serviceaccount:kube-system:generic-garbage-collector"]
- level: None
"""
TARGET = Target("", "v1", "configmaps", "default", "child")


class Kept:
    """A backend that keeps each event as JSON, as it stands when emitted."""

    def __init__(self) -> None:
        self.events: list[dict[str, object]] = []

    def process_events(self, *events: Event) -> None:
        self.events.extend(event.as_json() for event in events)

    def close(self) -> None:
        pass


async def done(value: str) -> str:
    return value


async def refused() -> str:
    raise errors.conflict("configmaps", "", "child", "Precondition failed: UID in precondition: a")


def test_a_write_is_a_request_of_the_controller_with_its_status() -> None:
    kept = Kept()
    audit = InternalAudit(load_policy(POLICY), kept)
    options = {"preconditions": {"uid": "a"}}
    assert asyncio.run(audit.write(GC, "delete", TARGET, done("gone"), options)) == "gone"
    received, complete = kept.events
    assert [received["stage"], complete["stage"]] == ["RequestReceived", "ResponseComplete"]
    assert complete["auditID"] == received["auditID"]
    assert complete["requestURI"] == "/api/v1/namespaces/default/configmaps/child"
    assert complete["objectRef"] == {
        "resource": "configmaps",
        "namespace": "default",
        "name": "child",
        "apiVersion": "v1",
    }
    assert complete["user"] == {"username": GC.name}
    assert complete["requestObject"] == options
    assert complete["responseStatus"] == {"metadata": {}, "code": 200}


def test_a_refused_write_records_the_error_and_raises_it() -> None:
    kept = Kept()
    audit = InternalAudit(load_policy(POLICY), kept)
    with pytest.raises(errors.APIError):
        asyncio.run(audit.write(GC, "delete", TARGET, refused()))
    status = kept.events[-1]["responseStatus"]
    assert isinstance(status, dict)
    assert status["code"] == 409 and status["reason"] == "Conflict"
    assert "Precondition failed" in status["message"]


def test_the_policy_and_a_missing_log_record_nothing() -> None:
    kept = Kept()
    audit = InternalAudit(load_policy(POLICY), kept)
    named = Target("apps", "v1", "deployments", "", "web")
    assert asyncio.run(audit.write(GC, "patch", named, done("patched"))) == "patched"
    assert not kept.events  # the policy's None level
    assert asyncio.run(InternalAudit().write(GC, "delete", TARGET, done("gone"))) == "gone"
    assert named.path == "/apis/apps/v1/deployments/web"
