"""kube's rules for Events (pkg/apis/core/validation/events.go), on the stored core form both groups share.

Every write, through either group, passes ``legacyValidateEvent``: an event without eventTime (the old API's)
names its involved object's namespace, or none in "default"; one with eventTime has its reporting fields. A
write through events.k8s.io/v1 is then held to more: ``ValidateEventCreate`` requires eventTime and a known
type and refuses the deprecated fields; ``ValidateEventUpdate`` keeps everything but the series (and
metadata) as it was. core v1 stops after the legacy rules, for compatibility. The fields carry the internal
(core) names in kube's messages, and so they do here (``message``, not ``note``).

Bad values are printed as Go's ``field.Error`` prints them: strings quoted, timestamps through their String
method, internal structs as ``%#v``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from apiserver.machinery.names import is_qualified_name
from apiserver.machinery.objects import Object
from apiserver.schema import Cause
from apiserver.schema.causes import format_bad_value, go_quote, invalid, required

__all__ = ["validate_create", "validate_legacy", "validate_update"]

# kube's limits (pkg/apis/core/validation/events.go)
REPORTING_INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024
EVENT_TYPES = ("Normal", "Warning")
# namespaces whose events may leave involvedObject.namespace empty (metav1.NamespaceDefault, NamespaceSystem)
NAMESPACE_DEFAULT, NAMESPACE_SYSTEM = "default", "kube-system"
IMMUTABLE = "field is immutable"

# The internal Go structs' fields in declaration order, for %#v (pkg/apis/core/types.go)
_OBJECT_REFERENCE = (
    ("Kind", "kind"),
    ("Namespace", "namespace"),
    ("Name", "name"),
    ("UID", "uid"),
    ("APIVersion", "apiVersion"),
    ("ResourceVersion", "resourceVersion"),
    ("FieldPath", "fieldPath"),
)
_EVENT_SOURCE = (("Component", "component"), ("Host", "host"))


def _text(event: Object, *path: str) -> str:
    value: Any = event
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else ""


def _namespace_mismatch(event: Object) -> Cause:
    return invalid(
        "involvedObject.namespace",
        _text(event, "involvedObject", "namespace"),
        "does not match event.namespace",
    )


def validate_legacy(event: Object) -> list[Cause]:
    """legacyValidateEvent: what every event must satisfy, whichever group wrote it."""
    causes: list[Cause] = []
    namespace = _text(event, "metadata", "namespace")
    involved_namespace = _text(event, "involvedObject", "namespace")
    if not event.get("eventTime"):
        # an old-API event: its namespace is its object's, or "default" (or none) for a cluster-scoped one
        allowed = (involved_namespace,) if involved_namespace else ("", NAMESPACE_DEFAULT)
        return [_namespace_mismatch(event)] if namespace not in allowed else []
    if not involved_namespace and namespace not in (NAMESPACE_DEFAULT, NAMESPACE_SYSTEM):
        causes.append(_namespace_mismatch(event))
    controller = _text(event, "reportingComponent")
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
        value = _text(event, field)
        if not value:
            causes.append(required(field))
        if len(value) > limit:
            causes.append(invalid(field, "", f"can have at most {limit} characters"))
    if len(_text(event, "message")) > NOTE_LIMIT:
        causes.append(invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return causes


def _series(event: Object) -> list[Cause]:
    """validateV1EventSeries: a series has been seen at least twice, and says when last."""
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    causes = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        causes.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(required("series.lastObservedTime"))
    return causes


def validate_create(event: Object) -> list[Cause]:
    """ValidateEventCreate for events.k8s.io/v1: the legacy rules and the strict ones."""
    causes = validate_legacy(event)
    causes.extend(_series(event))
    if not event.get("eventTime"):
        causes.append(required("eventTime"))
    if event.get("type") not in EVENT_TYPES:
        causes.append(invalid("type", "", f"has invalid value: {_text(event, 'type')}"))
    for field in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(field):
            causes.append(invalid(field, "", "needs to be unset"))
    if _text(event, "source", "component") or _text(event, "source", "host"):
        causes.append(invalid("source", "", "needs to be unset"))
    return causes


def _go_struct(type_name: str, fields: Sequence[tuple[str, str]], value: Any) -> str:
    """Go's ``%#v`` of an internal struct of string fields, as field.Error prints one it cannot JSON-encode."""
    source = value if isinstance(value, dict) else {}
    shown = ", ".join(f"{go_name}:{_go_string(source.get(key))}" for go_name, key in fields)
    return f"{type_name}{{{shown}}}"


def _go_time(value: Any) -> str:
    """time.Time.String() of a metav1.Time or MicroTime (their Stringer): ``2006-01-02 15:04:05.999 +0000 UTC``;
    the zero time when unset."""
    if not isinstance(value, str) or not value:
        return "0001-01-01 00:00:00 +0000 UTC"
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    fraction = f".{moment.microsecond:06d}".rstrip("0") if moment.microsecond else ""
    offset = moment.strftime("%z") or "+0000"
    zone = "UTC" if offset == "+0000" else offset
    return f"{moment:%Y-%m-%d %H:%M:%S}{fraction} {offset} {zone}"


def _reference(value: Any) -> str:
    return _go_struct("core.ObjectReference", _OBJECT_REFERENCE, value)


def _optional_reference(value: Any) -> str:
    """A *core.ObjectReference: nil prints as null, otherwise the struct it points to."""
    return _reference(value) if isinstance(value, dict) else "null"


def _go_string(value: Any) -> str:
    return go_quote(value if isinstance(value, str) else "")


def _go_count(value: Any) -> str:
    return format_bad_value(value if isinstance(value, int) else 0)


Printer = Callable[[Any], str]
# ValidateEventUpdate's immutable fields, in its order (reason is checked twice there, and reported twice)
_IMMUTABLE: tuple[tuple[str, str, Printer], ...] = (
    ("involvedObject", "involvedObject", _reference),
    ("reason", "reason", _go_string),
    ("message", "message", _go_string),
    ("source", "source", lambda v: _go_struct("core.EventSource", _EVENT_SOURCE, v)),
    ("firstTimestamp", "firstTimestamp", _go_time),
    ("lastTimestamp", "lastTimestamp", _go_time),
    ("count", "count", _go_count),
    ("reason", "reason", _go_string),
    ("type", "type", _go_string),
    ("eventTime", "eventTime", _go_time),
    ("action", "action", _go_string),
    ("related", "related", _optional_reference),
    ("reportingController", "reportingComponent", _go_string),
    ("reportingInstance", "reportingInstance", _go_string),
)


def _go_zero(value: Any) -> Any:
    """The value as Go holds it after decoding: empty strings, zero numbers, empty structs and an absent
    field are all the zero value, and compare equal."""
    if isinstance(value, dict):
        kept = {key: _go_zero(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item is not None} or None
    return value if value not in ("", 0, None, False) else None


def _same(new: Any, old: Any, field: str) -> bool:
    if field == "related":  # a pointer: nil differs from a pointer to an empty reference
        return (new is None) == (old is None) and bool(_go_zero(new) == _go_zero(old))
    return bool(_go_zero(new) == _go_zero(old))


def validate_update(event: Object, old: Object) -> list[Cause]:
    """ValidateEventUpdate for events.k8s.io/v1: the legacy rules, the series when it changed, and every
    other field as it was (``field is immutable``, the new value printed)."""
    causes = validate_legacy(event)
    if event.get("series") != old.get("series"):
        causes.extend(_series(event))
    for field, key, printer in _IMMUTABLE:
        new_value, old_value = event.get(key), old.get(key)
        if not _same(new_value, old_value, key):
            causes.append(_immutable(field, printer(new_value)))
    return causes


def _immutable(field: str, shown: str) -> Cause:
    """ValidateImmutableField's field.Invalid(path, newValue, "field is immutable"), the value already
    printed as Go prints it."""
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {IMMUTABLE}", field)
