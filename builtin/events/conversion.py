"""events.k8s.io/v1 Event ↔ core v1 Event, the form both are stored in.

kube stores events once (/registry/events) and serves events.k8s.io/v1 as a view of them: its conversion to
and from the internal core Event renames a few fields and copies the others (kubernetes/kubernetes
pkg/apis/events/v1/conversion.go, Convert_v1_Event_To_core_Event and back: regarding ↔ involvedObject,
note ↔ message, deprecatedSource ↔ source, deprecatedFirstTimestamp/LastTimestamp/Count ↔
firstTimestamp/lastTimestamp/count; the internal ReportingController is core v1's reportingComponent)."""

from __future__ import annotations

from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object

__all__ = ["CORE_API_VERSION", "EVENTS_API_VERSION", "core_view", "from_core", "to_core"]

CORE_API_VERSION = "v1"
EVENTS_API_VERSION = "events.k8s.io/v1"

# events.k8s.io/v1 field → core v1 field; the fields not named here have one name in both
_TO_CORE = {
    "regarding": "involvedObject",
    "note": "message",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
    "reportingController": "reportingComponent",
}
_FROM_CORE = {core: events for events, core in _TO_CORE.items()}


def _renamed(obj: Object, names: dict[str, str], api_version: str) -> Object:
    """A deep copy of ``obj`` with its top-level fields renamed and its apiVersion set. A field of the other
    shape's name (``message`` in an events.k8s.io Event) has no place in this one: it is dropped, as the
    Go decoder drops an unknown field."""
    copied = deep_copy(obj)
    out: Object = {}
    for key, value in copied.items():
        if key in names.values() and key not in names:
            continue
        out[names.get(key, key)] = value
    out["apiVersion"] = api_version
    return out


def to_core(event: Object) -> Object:
    """An events.k8s.io/v1 Event as the core v1 Event that is stored. A null eventTime (``from_core``'s
    for an event without one) is no eventTime: kube's zero MicroTime, not a value core's schema refuses."""
    out = _renamed(event, _TO_CORE, CORE_API_VERSION)
    if "eventTime" in out and out["eventTime"] is None:
        del out["eventTime"]
    return out


def from_core(event: Object) -> Object:
    """A stored core v1 Event as events.k8s.io/v1 shows it. Its eventTime has no omitempty in Go (k8s.io/api
    events/v1 types.go): an event without one (written through core v1) shows ``"eventTime": null``."""
    out = _renamed(event, _FROM_CORE, EVENTS_API_VERSION)
    out.setdefault("eventTime", None)
    return out


def core_view(event: Object) -> Object:
    """An events.k8s.io/v1 Event under core v1's field names, sharing its values: what kube's printers read
    (they print the internal core Event of either group). For reading only, never stored."""
    return {_TO_CORE.get(key, key): value for key, value in event.items()}
