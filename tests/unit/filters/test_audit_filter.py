"""The audit filter (kube's WithAudit, WithFailedAuthenticationAudit): the stages each request reaches, the
event's fields in audit.k8s.io/v1's shape, what later filters add (impersonated user, the authorization
decision), the answer's status, and no credentials in any event."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from apiserver.audit.event import Event, Level, Stage
from apiserver.audit.policy import AuditConfig
from apiserver.authentication.authenticator import request_authenticator
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import AlwaysAllow, Attributes, Authorizer
from apiserver.endpoints.http import ASGIApp, Receive, Scope, Send, chunk_stream, respond_error
from apiserver.filters.audit import AuditFilter, Auditor
from apiserver.filters.auditinit import AuditInitFilter
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.authorization import AuthorizationFilter
from apiserver.filters.impersonation import ImpersonationFilter
from apiserver.filters.pipeline import Pipeline
from apiserver.filters.requestinfo import RequestInfoFilter
from apiserver.machinery import errors
from builtin.authentication.impersonation import IMPERSONATION_KINDS
from tests.unit.filters.support import RuleAuthorizer, TokenFile, echo, request, run


class Recorder:
    """A backend that keeps each event as it was emitted."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def process_events(self, *events: Event) -> None:
        self.events.extend(event.as_json() for event in events)

    def close(self) -> None:
        """Nothing is held."""


class Everything:
    def __init__(self, omit: frozenset[Stage] = frozenset()) -> None:
        self.config = AuditConfig(Level.METADATA, omit)

    def evaluate(self, attributes: Attributes) -> AuditConfig:
        return self.config


class OnlyWrites:
    def evaluate(self, attributes: Attributes) -> AuditConfig:
        read = attributes.verb in ("get", "list", "watch")
        return AuditConfig(Level.NONE if read else Level.METADATA)


TOKENS = TokenFile({"alice-token": UserInfo("alice", groups=("devs",))})


def chain(
    recorder: Recorder,
    app: ASGIApp = echo,
    authorizer: Authorizer | None = None,
    policy: Any = None,
) -> ASGIApp:
    """The chain's filters in kube's order, audit (and the audit ID outermost) included."""
    authorizer = authorizer or AlwaysAllow()
    auditor = Auditor(policy or Everything(), recorder)
    steps = [
        AuditInitFilter(),
        RequestInfoFilter(),
        AuthenticationFilter(request_authenticator([TOKENS]), auditor),
        AuditFilter(auditor),
        ImpersonationFilter(authorizer, IMPERSONATION_KINDS),
        AuthorizationFilter(authorizer),
    ]
    return Pipeline(steps, app)


def without_times(event: dict[str, Any]) -> dict[str, Any]:
    assert event.pop("requestReceivedTimestamp").endswith("Z")
    assert event.pop("stageTimestamp").endswith("Z")
    return event


def test_a_request_is_recorded_when_received_and_when_complete() -> None:
    recorder = Recorder()
    response = request(
        chain(recorder),
        "GET",
        "/apis/apps/v1/namespaces/web/deployments/front?pretty=1",
        [("Authorization", "Bearer alice-token"), ("User-Agent", "kubectl/v1.32.4")],
    )
    audit_id = response.headers["audit-id"]
    received, complete = [without_times(event) for event in recorder.events]
    expected = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id,
        "stage": "RequestReceived",
        "requestURI": "/apis/apps/v1/namespaces/web/deployments/front?pretty=1",
        "verb": "get",
        "user": {"username": "alice", "groups": ["devs", "system:authenticated"]},
        "sourceIPs": ["127.0.0.1"],
        "userAgent": "kubectl/v1.32.4",
        "objectRef": {
            "resource": "deployments",
            "namespace": "web",
            "name": "front",
            "apiGroup": "apps",
            "apiVersion": "v1",
        },
    }
    assert received == expected
    assert complete == {
        **expected,
        "stage": "ResponseComplete",
        "responseStatus": {"metadata": {}, "code": 200},
        "annotations": {
            "authorization.k8s.io/decision": "allow",
            "authorization.k8s.io/reason": "",
        },
    }
    assert b"alice-token" not in orjson.dumps(recorder.events)


def test_a_client_audit_id_is_kept() -> None:
    recorder = Recorder()
    response = request(chain(recorder), "GET", "/version", [("Audit-ID", "from-the-client")])
    assert response.headers["audit-id"] == "from-the-client"
    assert {event["auditID"] for event in recorder.events} == {"from-the-client"}
    assert "objectRef" not in recorder.events[0]


def test_impersonation_and_a_refusal_are_recorded() -> None:
    recorder = Recorder()
    authorizer = RuleAuthorizer(lambda a: a.verb == "impersonate", reason="read-only here")
    request(
        chain(recorder, authorizer=authorizer),
        "DELETE",
        "/api/v1/namespaces/default/configmaps/cm",
        [("Impersonate-User", "jane")],
    )
    complete = recorder.events[-1]
    assert complete["user"] == {
        "username": "system:anonymous",
        "groups": ["system:unauthenticated"],
    }
    assert complete["impersonatedUser"] == {"username": "jane", "groups": ["system:authenticated"]}
    assert complete["annotations"] == {
        "authorization.k8s.io/decision": "forbid",
        "authorization.k8s.io/reason": "read-only here",
    }
    status = complete["responseStatus"]
    assert (status["code"], status["reason"], status["status"]) == (403, "Forbidden", "Failure")
    assert status["message"].startswith('configmaps "cm" is forbidden: User "jane" cannot delete')
    assert status["details"] == {"name": "cm", "kind": "configmaps"}


def test_a_watch_is_recorded_when_its_response_starts() -> None:
    recorder = Recorder()
    request(chain(recorder), "GET", "/api/v1/configmaps?watch=1")
    assert [event["stage"] for event in recorder.events] == [
        "RequestReceived",
        "ResponseStarted",
        "ResponseComplete",
    ]
    assert recorder.events[1]["responseStatus"] == {"metadata": {}, "code": 200}


def test_omitted_stages_and_unaudited_requests_are_not_recorded() -> None:
    recorder = Recorder()
    app = chain(recorder, policy=Everything(frozenset({Stage.REQUEST_RECEIVED})))
    request(app, "GET", "/api/v1/configmaps")
    assert [event["stage"] for event in recorder.events] == ["ResponseComplete"]

    recorder = Recorder()
    app = chain(recorder, policy=OnlyWrites())
    response = request(app, "GET", "/api/v1/configmaps")
    assert recorder.events == []
    # kube's WithAuditInit echoes the ID whether or not the policy records the request
    assert response.headers["audit-id"]
    request(app, "POST", "/api/v1/namespaces/default/configmaps")
    assert [event["verb"] for event in recorder.events] == ["create", "create"]


def test_a_failed_authentication_is_recorded_once() -> None:
    recorder = Recorder()
    response = request(
        chain(recorder), "GET", "/api/v1/secrets", [("Authorization", "Bearer forged")]
    )
    assert response.status_code == 401
    [event] = [without_times(event) for event in recorder.events]
    assert event["auditID"] == response.headers["audit-id"]
    assert (event["stage"], event["user"], event["verb"]) == (
        "ResponseStarted",
        {"username": ""},
        "list",
    )
    assert event["responseStatus"] == {
        "metadata": {},
        "code": 401,
        "message": "Authentication failed, attempted: bearer",
    }
    assert b"forged" not in orjson.dumps(recorder.events)


def test_an_app_that_fails_is_recorded_at_panic() -> None:
    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("a bug")

    recorder = Recorder()

    async def exchange(client: httpx.AsyncClient) -> None:
        try:
            await client.get("/api/v1/configmaps")
        except RuntimeError:
            return
        raise AssertionError("the failure did not propagate")

    run(chain(recorder, app=failing), exchange)
    assert [event["stage"] for event in recorder.events] == ["RequestReceived", "Panic"]
    assert recorder.events[-1]["responseStatus"] == {"metadata": {}, "code": 500}


def test_an_error_status_is_recorded_with_its_reason() -> None:
    async def conflict(scope: Scope, receive: Receive, send: Send) -> None:
        await respond_error(send, errors.conflict("configmaps", "", "cm", errors.MODIFIED))

    recorder = Recorder()
    request(chain(recorder, app=conflict), "PUT", "/api/v1/namespaces/a/configmaps/cm")
    assert recorder.events[-1]["responseStatus"] == {
        "metadata": {},
        "status": "Failure",
        "message": f'Operation cannot be fulfilled on configmaps "cm": {errors.MODIFIED}',
        "reason": "Conflict",
        "details": {"name": "cm", "kind": "configmaps"},
        "code": 409,
    }


class ServerStream:
    """The server's side of a response that can be written to directly once started (as uvicorn's cycle
    is in apiserver/server/cycle.py), forwarding every message to the in-process client."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.forward: Send | None = None
        self.started = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.forward = send
        await self.app(scope, receive, self.send)

    async def send(self, message: Any) -> None:
        assert self.forward is not None
        self.started = self.started or message["type"] == "http.response.start"
        await self.forward(message)

    def chunk_stream(self) -> ServerStream | None:
        return self if self.started else None

    def write_chunk(self, framed: bytes) -> bool:
        return True


def streamed(seen: list[object]) -> ASGIApp:
    """An app that starts its response, notes whether it may write the rest directly, and ends it."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        seen.append(chunk_stream(send))
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


class ResponseBodies:
    def evaluate(self, attributes: Attributes) -> AuditConfig:
        return AuditConfig(Level.REQUEST_RESPONSE)


def test_a_watch_writes_its_chunks_directly_as_audit_records_none_of_them() -> None:
    """Audit records a watch's start and completion, never its chunks: the watch may write them straight
    to the connection. A response whose body is recorded goes through ``send``, chunk by chunk."""
    for path, policy, direct in (
        ("/api/v1/configmaps?watch=1", ResponseBodies(), True),
        ("/api/v1/configmaps", ResponseBodies(), False),
        ("/api/v1/configmaps", Everything(), True),
    ):
        recorder, seen = Recorder(), []
        server = ServerStream(chain(recorder, app=streamed(seen), policy=policy))
        request(server, "GET", path)
        assert seen == [server if direct else None], path
        assert [event["stage"] for event in recorder.events][-1] == "ResponseComplete"
