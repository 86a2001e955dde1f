"""events.k8s.io/v1 Event (kube's pkg/registry/core/event, the storage both groups share): a create through
events.k8s.io/v1 is held to the strict rules of kube's ValidateEventCreate
(pkg/apis/core/validation/events.go) that core v1 skips for compatibility: eventTime, reportingController,
reportingInstance, action and reason are required, type is Normal or Warning, and the deprecated fields
(core's firstTimestamp, lastTimestamp, count, source) stay unset. The strategy sees the stored (core) form, so
the fields carry core's names where kube's messages do too."""

from __future__ import annotations

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause
from apiserver.schema.causes import invalid, required
from apiserver.schema.objectmeta import is_qualified_name

# kube's limits (pkg/apis/core/validation/events.go)
REPORTING_INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024
EVENT_TYPES = ("Normal", "Warning")
DEPRECATED = ("firstTimestamp", "lastTimestamp", "count", "source")


class EventStrategy(Strategy):
    """Strict validation of events.k8s.io/v1 creates; updates are judged as core's."""

    def validate(self, obj: Object) -> list[Cause]:
        return _validate_create(obj)


def _validate_create(event: Object) -> list[Cause]:
    causes: list[Cause] = []
    involved = event.get("involvedObject") or {}
    namespace = (event.get("metadata") or {}).get("namespace", "")
    if not involved.get("namespace") and namespace not in ("default", "kube-system"):
        causes.append(invalid("involvedObject.namespace", "", "does not match event.namespace"))
    controller = event.get("reportingComponent") or ""
    if not controller:
        causes.append(required("reportingController"))
    causes.extend(
        invalid("reportingController", controller, message)
        for message in is_qualified_name(controller)
    )
    for field, limit in (
        ("reportingInstance", REPORTING_INSTANCE_LIMIT),
        ("action", ACTION_LIMIT),
        ("reason", REASON_LIMIT),
    ):
        value = event.get(field) or ""
        if not value:
            causes.append(required(field))
        elif len(value) > limit:
            causes.append(invalid(field, "", f"can have at most {limit} characters"))
    if len(event.get("message") or "") > NOTE_LIMIT:
        causes.append(invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    if not event.get("eventTime"):
        causes.append(required("eventTime"))
    if event.get("type") not in EVENT_TYPES:
        causes.append(invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for field in DEPRECATED:
        if event.get(field) and (field != "source" or any(event[field].values())):
            causes.append(invalid(field, "", "needs to be unset"))
    return causes
