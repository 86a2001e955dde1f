"""An audit.k8s.io/v1 ``Event``: one request's record, emitted at each stage it reaches, and the ``Backend``
seam that keeps events (a JSON-lines log today; a webhook later).

Bodies are recorded only at the levels that ask for them (Request: the request's object, RequestResponse:
also the response's), as the policy decides per request; nothing reads headers into an event but the
User-Agent: credentials (Authorization) cannot reach an audit log."""

from __future__ import annotations

import enum
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from apiserver.authentication.user import UserInfo

log = logging.getLogger(__name__)


class Level(enum.Enum):
    """How much of a request is recorded (audit.k8s.io/v1 Level), each level all of the one before."""

    NONE = "None"
    METADATA = "Metadata"
    REQUEST = "Request"
    """Also the request's object (its body as JSON)."""
    REQUEST_RESPONSE = "RequestResponse"
    """Also the response's object (not for watches and other long-running responses)."""

    @property
    def records_request(self) -> bool:
        return self in (Level.REQUEST, Level.REQUEST_RESPONSE)

    @property
    def records_response(self) -> bool:
        return self is Level.REQUEST_RESPONSE


class Stage(enum.Enum):
    REQUEST_RECEIVED = "RequestReceived"
    RESPONSE_STARTED = "ResponseStarted"
    """Only long-running requests (watch) reach it: their headers leave long before their end."""
    RESPONSE_COMPLETE = "ResponseComplete"
    PANIC = "Panic"


@dataclass(slots=True)
class Event:
    """One request's audit record; the filters fill it in as the request goes (impersonation, the
    authorization decision, the response status) and each stage emits it as it stands then."""

    level: Level
    audit_id: str
    request_uri: str
    verb: str
    user: UserInfo
    source_ips: tuple[str, ...]
    user_agent: str
    received: float
    """Seconds since the epoch."""
    object_ref: dict[str, str] | None = None
    stage: Stage = Stage.REQUEST_RECEIVED
    stage_time: float = 0.0
    impersonated_user: UserInfo | None = None
    response_status: dict[str, Any] | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    request_object: Any = None
    """The request's body as JSON (Request level and above), None when it had none or none was kept."""
    response_object: Any = None
    """The response's body as JSON (RequestResponse level), None when none was kept."""

    def as_json(self) -> dict[str, Any]:
        """The audit.k8s.io/v1 Event, empty fields omitted as kube's omitempty does."""
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": self.level.value,
            "auditID": self.audit_id,
            "stage": self.stage.value,
            "requestURI": self.request_uri,
            "verb": self.verb,
            "user": self.user.as_json(),
        }
        if self.impersonated_user is not None:
            event["impersonatedUser"] = self.impersonated_user.as_json()
        if self.source_ips:
            event["sourceIPs"] = list(self.source_ips)
        if self.user_agent:
            event["userAgent"] = self.user_agent
        if self.object_ref:
            event["objectRef"] = self.object_ref
        if self.response_status is not None:
            event["responseStatus"] = self.response_status
        if self.request_object is not None:
            event["requestObject"] = self.request_object
        if self.response_object is not None:
            event["responseObject"] = self.response_object
        event["requestReceivedTimestamp"] = micro_time(self.received)
        event["stageTimestamp"] = micro_time(self.stage_time)
        if self.annotations:
            event["annotations"] = self.annotations
        return event


def emit(backend: Backend, event: Event, stage: Stage, omit: frozenset[Stage]) -> None:
    """Hand ``event`` at ``stage`` to ``backend`` unless the policy omits the stage; a backend that fails
    (a full disk) is logged and never fails the request (as kube logs its backends' errors)."""
    if stage in omit:
        return
    event.stage = stage
    event.stage_time = time.time()
    try:
        backend.process_events(event)
    except Exception:
        log.exception("the audit backend failed on event %s", event.audit_id)


_STATUS_FIELDS = ("status", "message", "reason", "details", "code")


def status_fields(document: dict[str, Any]) -> dict[str, Any]:
    """The fields of a Status an event's responseStatus carries (kube's LogResponseObject copies these at
    every level)."""
    status: dict[str, Any] = {"metadata": {}}
    status.update((key, document[key]) for key in _STATUS_FIELDS if key in document)
    return status


def micro_time(seconds: float) -> str:
    """metav1.MicroTime's JSON: RFC 3339 in UTC with microseconds."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Backend(Protocol):
    def process_events(self, *events: Event) -> None:
        """Keep ``events`` as they stand now (the same Event comes again at its next stage): a backend
        serialises or copies them before returning, and never blocks the event loop for long."""
        ...

    def close(self) -> None:
        """Flush and let go of what the backend holds: the server is shutting down."""
        ...
