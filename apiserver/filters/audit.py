"""The audit filter (kube's WithAudit and WithFailedAuthenticationAudit): each request the policy selects is
recorded when received, when a long-running response starts, and when its response is complete, with who
asked (and as whom), what, the answer's status and, at the Request and RequestResponse levels, the request's
and the response's objects (never a watch's stream). Present in the chain only when a backend is configured;
the audit ID comes from the audit init filter."""

from __future__ import annotations

import logging
import time
from contextvars import Token
from typing import Any

import orjson

from apiserver.audit.annotations import CURRENT as ANNOTATIONS
from apiserver.audit.bodies import MAX_RECORDED_BODY, TRUNCATED_ANNOTATION, BodyRecorder, Codecs
from apiserver.audit.event import Backend, Event, Level, Stage, emit, status_fields
from apiserver.audit.policy import AuditConfig, Policy
from apiserver.authentication.user import UserInfo
from apiserver.endpoints.http import (
    SCOPE_AUDIT_EVENT,
    SCOPE_AUDIT_ID,
    SCOPE_AUDIT_OBJECT_REF,
    SCOPE_USER,
    Message,
    Receive,
    Scope,
)
from apiserver.endpoints.replay import Replay
from apiserver.endpoints.routing import RequestInfo
from apiserver.filters.authorization import authorizer_attributes
from apiserver.filters.pipeline import Exchange

log = logging.getLogger(__name__)


class Auditor:
    """The policy and the backend, and the making and emitting of events, shared by the audit filter and
    the refusals that come before it (authentication's, a malformed ``?timeout=``'s)."""

    def __init__(
        self,
        policy: Policy,
        backend: Backend,
        codecs: Codecs | None = None,
        max_body: int = MAX_RECORDED_BODY,
    ) -> None:
        self.policy = policy
        self.backend = backend
        self.codecs: Codecs = codecs or {}
        """How protobuf bodies read as JSON."""
        self.max_body = max_body
        """The bytes of a body kept for its event at most."""

    def begin(
        self, scope: Scope, info: RequestInfo, user: UserInfo
    ) -> tuple[Event, AuditConfig] | None:
        """A new event of this request, or None when the policy records nothing of it."""
        config = self.policy.evaluate(authorizer_attributes(user, info))
        if config.level is Level.NONE:
            return None
        query = scope.get("query_string", b"")
        uri = (scope.get("raw_path") or scope["path"].encode()) + (b"?" + query if query else b"")
        client = scope.get("client")
        event = Event(
            config.level,
            scope[SCOPE_AUDIT_ID],
            uri.decode("latin-1"),
            info.verb,
            user,
            (client[0],) if client else (),
            _header(scope, b"user-agent"),
            time.time(),
            _object_ref(info),
        )
        return event, config

    def emit(self, event: Event, stage: Stage, config: AuditConfig) -> None:
        emit(self.backend, event, stage, config.omit_stages)

    def failed_authentication(self, scope: Scope, info: RequestInfo) -> None:
        """Record a request refused by authentication (kube's WithFailedAuthenticationAudit), its message
        naming the credentials tried."""
        self.failed_request(
            scope, info, {"metadata": {}, "code": 401, "message": _auth_methods(scope)}
        )

    def failed_request(self, scope: Scope, info: RequestInfo, status: dict[str, Any]) -> None:
        """Record a request refused before authentication (kube's withFailedRequestAudit: a malformed
        ``?timeout=``) or by it: one event at ResponseStarted, of no user yet."""
        begun = self.begin(scope, info, UserInfo(""))
        if begun is None:
            return
        event, config = begun
        event.response_status = status
        self.emit(event, Stage.RESPONSE_STARTED, config)


class AuditFilter:
    def __init__(self, auditor: Auditor) -> None:
        self.auditor = auditor

    def replay(self, exchange: Exchange, replay: Replay) -> None:
        """An audited request is recorded every time: never replayed. The policy's verdict depends on the
        user and the request, which a replay repeats."""
        if exchange.recording is not None:
            replay.refuse()

    def before(self, exchange: Exchange) -> None:
        scope, info = exchange.scope, exchange.info
        assert info is not None
        begun = self.auditor.begin(scope, info, scope[SCOPE_USER])
        if begun is None:
            return
        event, config = begun
        scope[SCOPE_AUDIT_EVENT] = event
        if event.object_ref is not None:
            scope[SCOPE_AUDIT_OBJECT_REF] = event.object_ref
        self.auditor.emit(event, Stage.REQUEST_RECEIVED, config)
        recording = Recording(self.auditor, event, config, exchange.long_running)
        recording.annotating = ANNOTATIONS.set(event.annotations)
        if config.level.records_request and not recording.long_running:
            recording.request_body = BodyRecorder(
                self.auditor.max_body, _header(scope, b"content-type")
            )
            recording.receive_from = exchange.receive
            exchange.receive = recording.receive
        exchange.recording = recording

    def after(self, exchange: Exchange, error: BaseException | None) -> None:
        recording = exchange.recording
        if not isinstance(recording, Recording):  # not audited (None), or so the exchange types it
            return
        if isinstance(error, Exception):
            recording.panicked()
        # also when the task is cancelled (a watch whose client went away) or the handler answered
        # nothing
        elif not recording.completed:
            recording.complete()
        if recording.annotating is not None:
            ANNOTATIONS.reset(recording.annotating)


class Recording:
    """One audited request's event, filled in from the messages the exchange sends (``see``) and, when
    its body is recorded, from what ``receive`` reads."""

    __slots__ = (
        "annotating",
        "auditor",
        "completed",
        "config",
        "error_status_due",
        "event",
        "failed",
        "long_running",
        "receive_from",
        "request_body",
        "response_body",
    )

    def __init__(
        self, auditor: Auditor, event: Event, config: AuditConfig, long_running: bool
    ) -> None:
        self.auditor = auditor
        self.event = event
        self.config = config
        self.long_running = long_running
        """kube records no object of a long-running request: a watch's stream is not one response."""
        self.annotating: Token[dict[str, str] | None] | None = None
        """The audit annotations' context, reset when the request is done."""
        self.receive_from: Receive | None = None
        self.request_body: BodyRecorder | None = None
        self.response_body: BodyRecorder | None = None
        self.error_status_due = False
        self.completed = False
        self.failed = False
        """Recorded at the Panic stage."""

    async def receive(self) -> Message:
        assert self.receive_from is not None and self.request_body is not None
        message = await self.receive_from()
        if message["type"] == "http.request":
            self.request_body.add(message.get("body", b""))
        return message

    @property
    def sees_chunks(self) -> bool:
        return self.response_body is not None or self.error_status_due

    def see(self, message: Message) -> None:
        event = self.event
        if message["type"] == "http.response.start":
            code = message["status"]
            event.response_status = {"metadata": {}, "code": code}
            self.error_status_due = code >= 400
            if self.config.level.records_response and not self.long_running:
                content_type = _header_value(message.get("headers", ()), b"content-type")
                self.response_body = BodyRecorder(self.auditor.max_body, content_type)
            if self.long_running:
                self.auditor.emit(event, Stage.RESPONSE_STARTED, self.config)
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if self.response_body is not None:
                self.response_body.add(body)
            if self.error_status_due:
                self.error_status_due = False  # the Status of an error is its whole (first) body
                status = _status_of(body)
                if status is not None:
                    event.response_status = status
            if not message.get("more_body", False) and not self.completed:
                # recorded before the response's last bytes leave, as kube's is before Go's net/http
                # flushes a handler's response: a client that saw its answer finds its event in the log
                self.complete()

    def complete(self) -> None:
        self.completed = True
        if self.event.response_status is None:
            self.event.response_status = {"metadata": {}, "code": 200}
        self._record_objects()
        self.auditor.emit(self.event, Stage.RESPONSE_COMPLETE, self.config)

    def panicked(self) -> None:
        self.failed = True
        self.event.response_status = {"metadata": {}, "code": 500}
        self._record_objects()
        self.auditor.emit(self.event, Stage.PANIC, self.config)

    def _record_objects(self) -> None:
        """The objects the level asks for, read once the response is complete; a body too large to keep
        marks the event truncated, as kube's truncating backend marks events it drops objects from."""
        codecs, omit, event = self.auditor.codecs, self.config.omit_managed_fields, self.event
        if self.request_body is not None:
            if self.request_body.overflowed:
                event.annotations[TRUNCATED_ANNOTATION] = "true"
            else:
                event.request_object = self.request_body.as_json(codecs, omit)
        if self.response_body is not None:
            if self.response_body.overflowed:
                event.annotations[TRUNCATED_ANNOTATION] = "true"
            else:
                event.response_object = self.response_body.as_json(codecs, omit)


def _header(scope: Scope, name: bytes) -> str:
    return _header_value(scope["headers"], name)


def _header_value(headers: Any, name: bytes) -> str:
    for key, value in headers:
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def _object_ref(info: RequestInfo) -> dict[str, str] | None:
    if not info.is_resource_request:
        return None
    fields = {
        "resource": info.resource,
        "namespace": info.namespace,
        "name": info.name,
        "apiGroup": info.api_group,
        "apiVersion": info.api_version,
        "subresource": info.subresource,
    }
    return {key: value for key, value in fields.items() if value}


def _status_of(body: bytes) -> dict[str, Any] | None:
    """The bounded fields of a ``metav1.Status`` body (kube's LogResponseObject copies these at every
    level), or None when the body is something else."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict) or document.get("kind") != "Status":
        return None
    return status_fields(document)


def _auth_methods(scope: Scope) -> str:
    """kube's getAuthMethods: which credentials a refused request carried."""
    scheme = _header(scope, b"authorization").strip().split(" ", 1)[0].lower()
    methods = [scheme] if scheme in ("basic", "bearer") else []
    if methods:
        return f"Authentication failed, attempted: {', '.join(methods)}"
    return "Authentication failed, no credentials provided"
