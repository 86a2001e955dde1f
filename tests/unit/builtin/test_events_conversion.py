"""events.k8s.io/v1 Event ↔ core v1 Event as kube converts them (pkg/apis/events/v1/conversion.go): the
renamed fields land under their other names, the shared ones are copied, and a round trip loses nothing."""

from __future__ import annotations

from typing import Any

from builtin.events.conversion import from_core, to_core

EVENTS_V1: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "e1", "namespace": "default"},
    "eventTime": "2026-12-01T21:00:00.000000Z",
    "series": {"count": 2, "lastObservedTime": "2026-12-01T21:01:00.000000Z"},
    "reportingController": "example.com/controller",
    "reportingInstance": "controller-0",
    "action": "Scale",
    "reason": "Scaled",
    "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
    "related": {"kind": "Secret", "name": "y", "namespace": "default"},
    "note": "scaled up",
    "type": "Normal",
    "deprecatedSource": {"component": "kubelet", "host": "node-1"},
    "deprecatedFirstTimestamp": "2026-12-01T20:00:00Z",
    "deprecatedLastTimestamp": "2026-12-01T20:30:00Z",
    "deprecatedCount": 3,
}


def test_events_v1_to_core_renames_as_kube() -> None:
    core = to_core(EVENTS_V1)
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"] == EVENTS_V1["regarding"]
    assert core["message"] == "scaled up"
    assert core["source"] == {"component": "kubelet", "host": "node-1"}
    assert core["firstTimestamp"] == "2026-12-01T20:00:00Z"
    assert core["lastTimestamp"] == "2026-12-01T20:30:00Z"
    assert core["count"] == 3
    assert core["reportingComponent"] == "example.com/controller"
    for shared in (
        "eventTime",
        "series",
        "reportingInstance",
        "action",
        "reason",
        "related",
        "type",
    ):
        assert core[shared] == EVENTS_V1[shared]
    assert not {"regarding", "note", "deprecatedSource", "reportingController"} & core.keys()


def test_round_trip_through_core_loses_nothing() -> None:
    assert from_core(to_core(EVENTS_V1)) == EVENTS_V1


def test_an_event_without_event_time_shows_it_null() -> None:
    """Go's events/v1 eventTime has no omitempty: a core-written event shows ``"eventTime": null``."""
    core = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "c"}, "message": "m"}
    assert from_core(core)["eventTime"] is None
    assert "eventTime" not in to_core(from_core(core))  # back to core as it was: no null to refuse


def test_conversion_copies_and_leaves_the_input_alone() -> None:
    core = to_core(EVENTS_V1)
    core["involvedObject"]["name"] = "changed"
    assert EVENTS_V1["regarding"]["name"] == "x"


def test_a_field_of_the_other_shape_is_dropped() -> None:
    """A core field name in an events.k8s.io body has no place there (the Go decoder drops it)."""
    assert to_core({**EVENTS_V1, "message": "stray"})["message"] == "scaled up"
    assert from_core({**to_core(EVENTS_V1), "note": "stray"})["note"] == "scaled up"
