"""The server's own writes in the audit log (apiserver/audit/internal.py): recorded as the request kube's
controller would make, judged by the same policy, with the write's status; nothing without a log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from apiserver.audit.internal import InternalAudit, Target
from apiserver.audit.log import LogBackend
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


def logged(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def done(value: str) -> str:
    return value


async def refused() -> str:
    raise errors.conflict("configmaps", "", "child", "Precondition failed: UID in precondition: a")


async def broken() -> str:
    raise OSError("etcd is down")


def test_a_write_is_a_request_of_the_controller_with_its_status(tmp_path: Path) -> None:
    audit = InternalAudit(load_policy(POLICY), LogBackend(str(tmp_path / "audit.log")))
    options = {"preconditions": {"uid": "a"}}
    assert asyncio.run(audit.write(GC, "delete", TARGET, done("gone"), options)) == "gone"
    received, complete = logged(tmp_path / "audit.log")
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


def test_a_refused_write_records_the_error_and_raises_it(tmp_path: Path) -> None:
    audit = InternalAudit(load_policy(POLICY), LogBackend(str(tmp_path / "audit.log")))
    with pytest.raises(errors.APIError):
        asyncio.run(audit.write(GC, "delete", TARGET, refused()))
    status = logged(tmp_path / "audit.log")[-1]["responseStatus"]
    assert status["code"] == 409 and status["reason"] == "Conflict"
    assert "Precondition failed" in status["message"]


def test_the_policy_and_a_missing_log_record_nothing(tmp_path: Path) -> None:
    audit = InternalAudit(load_policy(POLICY), LogBackend(str(tmp_path / "audit.log")))
    named = Target("apps", "v1", "deployments", "", "web")
    assert asyncio.run(audit.write(GC, "patch", named, done("patched"))) == "patched"
    assert not logged(tmp_path / "audit.log")  # the policy's None level
    assert asyncio.run(InternalAudit().write(GC, "delete", TARGET, done("gone"))) == "gone"
    assert named.path == "/apis/apps/v1/deployments/web"


def test_any_other_failure_is_recorded_as_kubes_500(tmp_path: Path) -> None:
    audit = InternalAudit(load_policy(POLICY), LogBackend(str(tmp_path / "audit.log")))
    with pytest.raises(OSError):
        asyncio.run(audit.write(GC, "delete", TARGET, broken()))
    status = logged(tmp_path / "audit.log")[-1]["responseStatus"]
    assert status["code"] == 500 and status["reason"] == "InternalError"
