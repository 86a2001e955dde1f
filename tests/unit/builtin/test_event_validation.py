"""kube's event rules (pkg/apis/core/validation/events.go and its events_test.go cases): the legacy rules
every write passes, the strict create and update of events.k8s.io/v1, and bad values printed as Go's
field.Error prints them."""

from __future__ import annotations

from typing import Any

import pytest

from builtin.events.validation import validate_create, validate_legacy, validate_update


def event(namespace: str = "ns", **fields: Any) -> dict[str, Any]:
    """A valid events.k8s.io/v1 Event in its stored (core) form."""
    return {
        "metadata": {"name": "e", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingComponent": "example.com/c",
        "reportingInstance": "c-0",
        "action": "Act",
        "reason": "Why",
        "type": "Normal",
        **fields,
    }


def fields_of(causes: list[Any]) -> list[str]:
    return [cause.field for cause in causes]


@pytest.mark.parametrize(
    ("namespace", "involved", "event_time", "valid"),
    [
        # TestValidateEvent: an old event names its object's namespace, "default" or none when it has none
        ("foo", "foo", "", True),
        ("foo", "bar", "", False),
        ("default", "", "", True),
        ("kube-system", "", "", False),
        # a new event (eventTime set) may leave it empty in default and kube-system
        ("kube-system", "", "2026-01-01T00:00:00Z", True),
        ("foo", "", "2026-01-01T00:00:00Z", False),
    ],
)
def test_legacy_namespace_rule(namespace: str, involved: str, event_time: str, valid: bool) -> None:
    obj = event(namespace, eventTime=event_time)
    obj["involvedObject"]["namespace"] = involved
    assert (fields_of(validate_legacy(obj)) == []) is valid


def test_create_requires_the_new_api_s_fields() -> None:
    assert validate_create(event()) == []
    bare = event(type="Odd", count=2, source={"host": "h"})
    del bare["reportingInstance"]
    assert [str(cause) for cause in validate_create(bare)] == [
        "reportingInstance: Required value",
        'type: Invalid value: "": has invalid value: Odd',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
    ]
    assert fields_of(validate_create(event(action="a" * 129))) == ["action"]


def test_update_is_immutable_but_for_the_series() -> None:
    old = event()
    assert validate_update(event(series={"count": 2, "lastObservedTime": "x"}), old) == []
    assert validate_update(event(source={}, count=0, related=None), old) == []  # Go's zero values
    changed = event(
        reportingComponent="example.com/d",
        related={"kind": "Pod"},
        source={"component": "kubelet"},
        lastTimestamp="2026-01-02T03:04:05Z",
        count=3,
    )
    assert [str(cause) for cause in validate_update(changed, old)] == [
        'source: Invalid value: core.EventSource{Component:"kubelet", Host:""}: field is immutable',
        "lastTimestamp: Invalid value: 2026-01-02 03:04:05 +0000 UTC: field is immutable",
        "count: Invalid value: 3: field is immutable",
        'related: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"", Name:"", UID:"", '
        'APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
        'reportingController: Invalid value: "example.com/d": field is immutable',
    ]
    unrelated = validate_update(event(), event(related={"kind": "Pod"}))
    assert [str(cause) for cause in unrelated] == [
        "related: Invalid value: null: field is immutable"
    ]
    assert fields_of(validate_update(event(series={"count": 1}), old)) == [
        "series.count",
        "series.lastObservedTime",
    ]
