"""events.k8s.io/v1 Event beside core v1, from the same storage as kube serves it (events are stored once,
under /registry/events; pkg/apis/events/v1/conversion.go converts): what one API writes the other reads,
lists and watches, kubectl 1.33 and the `kubernetes` Python client see both, a create through events.k8s.io
is held to kube's strict ValidateEventCreate. (--event-ttl on both: tests/unit/builtin/test_event_ttl.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, config

from tests.kubectl import EVENT_COLUMNS, Kubectl, cells, kubectl_binary
from tests.serverproc import ServerProcess

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:unclosed <(socket.socket|ssl.SSLSocket):ResourceWarning"),
]

NAMESPACE = "evt"
CORE = f"/api/v1/namespaces/{NAMESPACE}/events"
EVENTS = f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    """The module's client, once the namespace of its events exists (the server: tests/conftest.py)."""
    with server.client(timeout=10) as client_:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        assert client_.post("/api/v1/namespaces", json=body).status_code == 201
        yield client_


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def kubectl(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    cache = tmp_path_factory.mktemp("kubectl-1.33")
    return Kubectl(kubectl_binary(33), server.kubeconfig, cache, NAMESPACE)


def stamp(moment: datetime, micro: bool = False) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def events_v1(name: str, when: datetime | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": stamp(when or datetime.now(UTC), micro=True),
        "reportingController": "example.com/tester",
        "reportingInstance": "tester-0",
        "action": "Test",
        "reason": "Tested",
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": NAMESPACE},
        "note": f"note of {name}",
        "type": "Normal",
        **fields,
    }


def core_v1(name: str, when: datetime | None = None) -> dict[str, Any]:
    moment = stamp(when or datetime.now(UTC))
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": NAMESPACE},
        "reason": "Core",
        "message": f"message of {name}",
        "type": "Warning",
        "firstTimestamp": moment,
        "lastTimestamp": moment,
        "count": 1,
    }


def test_python_client_events_v1_create_is_read_as_core(
    api: client.ApiClient, http: httpx.Client
) -> None:
    created = client.EventsV1Api(api).create_namespaced_event(
        NAMESPACE,
        client.EventsV1Event(
            metadata=client.V1ObjectMeta(name="py-events"),
            event_time=datetime.now(UTC),
            reporting_controller="example.com/python",
            reporting_instance="python-0",
            action="Create",
            reason="Created",
            regarding=client.V1ObjectReference(kind="ConfigMap", name="cm", namespace=NAMESPACE),
            note="from events.k8s.io",
            type="Normal",
            deprecated_count=None,
        ),
    )
    assert created.note == "from events.k8s.io"
    assert created.regarding.name == "cm"
    core = client.CoreV1Api(api).read_namespaced_event("py-events", NAMESPACE)
    assert core.message == "from events.k8s.io"
    assert core.involved_object.name == "cm"
    assert core.reporting_component == "example.com/python"
    assert core.metadata.uid == created.metadata.uid


def test_python_client_core_create_is_read_as_events_v1(
    api: client.ApiClient, http: httpx.Client
) -> None:
    """Read back raw: kube shows such an event's eventTime as null (no omitempty in Go), which the
    Python client's EventsV1Event refuses to deserialize, against kube as here."""
    now = datetime.now(UTC)
    client.CoreV1Api(api).create_namespaced_event(
        NAMESPACE,
        client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="py-core"),
            involved_object=client.V1ObjectReference(kind="Pod", name="p", namespace=NAMESPACE),
            reason="Pulled",
            message="from core",
            source=client.V1EventSource(component="kubelet", host="node-1"),
            first_timestamp=now,
            last_timestamp=now,
            count=2,
        ),
    )
    event = http.get(f"{EVENTS}/py-core").json()
    assert (event["note"], event["regarding"]["kind"], event["regarding"]["name"]) == (
        "from core",
        "Pod",
        "p",
    )
    assert event["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert event["deprecatedCount"] == 2
    assert event["deprecatedLastTimestamp"] == event["deprecatedFirstTimestamp"] is not None
    assert event["eventTime"] is None


def test_kubectl_lists_what_either_api_wrote(http: httpx.Client, kubectl: Kubectl) -> None:
    assert http.post(EVENTS, json=events_v1("kc-events")).status_code == 201
    assert http.post(CORE, json=core_v1("kc-core")).status_code == 201
    for resource in ("events.events.k8s.io", "events"):
        names = kubectl.run("get", resource, "-o", "name").stdout.split()
        assert {"kc-events", "kc-core"} <= {name.rpartition("/")[2] for name in names}, names
    listed = json.loads(kubectl.run("get", "events.v1.events.k8s.io", "-o", "json").stdout)
    notes = {item["metadata"]["name"]: item.get("note") for item in listed["items"]}
    assert notes["kc-core"] == "message of kc-core"
    assert listed["items"][0]["apiVersion"] == "events.k8s.io/v1"
    shown = kubectl.run("events").stdout  # kubectl events lists core v1 events
    assert "note of kc-events" in shown and "message of kc-core" in shown


def watch_first(
    http: httpx.Client, path: str, since: str, write: Callable[[], None], fields: str = ""
) -> dict[str, Any]:
    params = {"watch": "1", "resourceVersion": since}
    if fields:
        params["fieldSelector"] = fields
    with http.stream("GET", path, params=params) as stream:
        write()
        for line in stream.iter_lines():
            if line:
                event: dict[str, Any] = json.loads(line)
                return event
    pytest.fail("the watch ended without an event")


def test_a_watch_on_either_api_sees_writes_through_the_other(http: httpx.Client) -> None:
    since = http.get(CORE).json()["metadata"]["resourceVersion"]
    seen = watch_first(
        http, EVENTS, since, lambda: http.post(CORE, json=core_v1("w-core")).raise_for_status()
    )
    assert seen["type"] == "ADDED"
    assert seen["object"]["apiVersion"] == "events.k8s.io/v1"
    assert seen["object"]["note"] == "message of w-core"

    since = http.get(EVENTS).json()["metadata"]["resourceVersion"]
    seen = watch_first(
        http, CORE, since, lambda: http.post(EVENTS, json=events_v1("w-ev")).raise_for_status()
    )
    assert (seen["type"], seen["object"]["apiVersion"]) == ("ADDED", "v1")
    assert seen["object"]["message"] == "note of w-ev"


def causes(response: httpx.Response) -> set[str]:
    return {cause["field"] for cause in response.json()["details"]["causes"]}


def test_events_v1_create_is_validated_strictly_core_is_not(http: httpx.Client) -> None:
    """kube's ValidateEventCreate: reportingController, reportingInstance, action and reason are required of
    an event with an eventTime (legacyValidateEvent checks them only then), eventTime of every events.k8s.io
    create; a series has a count of at least 2; the deprecated fields stay unset."""
    bare = events_v1("strict")
    for field in ("reportingController", "reportingInstance", "action", "reason"):
        del bare[field]
    refused = http.post(EVENTS, json=bare)
    assert refused.status_code == 422, refused.text
    assert refused.json()["reason"] == "Invalid"
    assert causes(refused) == {"reportingController", "reportingInstance", "action", "reason"}
    timeless = events_v1("strict")
    del timeless["eventTime"], timeless["action"]
    assert causes(http.post(EVENTS, json=timeless)) == {"eventTime"}
    short_series = events_v1("strict", series={"count": 1})
    assert causes(http.post(EVENTS, json=short_series)) == {
        "series.count",
        "series.lastObservedTime",
    }
    deprecated = http.post(EVENTS, json=events_v1("strict", deprecatedCount=3))
    assert deprecated.status_code == 422
    assert causes(deprecated) == {"count"}
    assert http.post(CORE, json=core_v1("lenient")).status_code == 201


def test_core_writes_pass_the_legacy_rules(http: httpx.Client) -> None:
    """legacyValidateEvent on core v1 too: an old-API event is in its object's namespace."""
    stray = core_v1("stray")
    stray["involvedObject"]["namespace"] = "elsewhere"
    refused = http.post(CORE, json=stray)
    assert refused.status_code == 422, refused.text
    assert refused.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "elsewhere": does not match event.namespace',
            "field": "involvedObject.namespace",
        }
    ]


def test_events_v1_update_changes_the_series_only(http: httpx.Client) -> None:
    """kube's ValidateEventUpdate: through events.k8s.io/v1 every field but the series is immutable, in the
    internal names and Go's printing of the new value (reason is checked, and reported, twice there); core
    v1 updates pass the legacy rules only."""
    created = http.post(EVENTS, json=events_v1("upd")).json()
    regarding = {"kind": "ConfigMap", "name": "other", "namespace": NAMESPACE}
    changed = {**created, "note": "rewritten", "regarding": regarding, "reason": "Other"}
    refused = http.put(f"{EVENTS}/upd", json=changed)
    assert refused.status_code == 422, refused.text
    reference = (
        'core.ObjectReference{Kind:"ConfigMap", Namespace:"evt", Name:"other", UID:"", '
        'APIVersion:"", ResourceVersion:"", FieldPath:""}'
    )
    assert refused.json()["message"] == (
        'Event.events.k8s.io "upd" is invalid: ['
        f"involvedObject: Invalid value: {reference}: field is immutable, "
        'reason: Invalid value: "Other": field is immutable, '
        'message: Invalid value: "rewritten": field is immutable, '
        'reason: Invalid value: "Other": field is immutable]'
    )
    moment = datetime(2026, 1, 2, 3, 4, 5, 600000, UTC)
    retimed = http.put(f"{EVENTS}/upd", json={**created, "eventTime": stamp(moment, micro=True)})
    assert [cause["message"] for cause in retimed.json()["details"]["causes"]] == [
        "Invalid value: 2026-01-02 03:04:05.6 +0000 UTC: field is immutable"
    ]
    series = {"count": 2, "lastObservedTime": stamp(datetime.now(UTC), micro=True)}
    grown = http.put(f"{EVENTS}/upd", json={**created, "series": series})
    assert grown.status_code == 200, grown.text
    core = http.get(f"{CORE}/upd").json()
    assert http.put(f"{CORE}/upd", json={**core, "message": "rewritten"}).status_code == 200


def names(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {item["metadata"]["name"] for item in response.json()["items"]}


def test_field_selectors_in_each_api_s_words(http: httpx.Client) -> None:
    """kube's field labels: events.k8s.io/v1 names the involved object ``regarding`` and the reporter
    ``reportingController`` (pkg/apis/events/v1/conversion.go), core v1 ``involvedObject`` and
    ``reportingComponent``; ``source`` is the old source.component, else the reporting controller
    (pkg/registry/core/event/strategy.go ToSelectableFields)."""
    target = {"kind": "Secret", "name": "sel-target", "namespace": NAMESPACE}
    new = events_v1("sel-new", regarding=target, reportingController="example.com/selector")
    assert http.post(EVENTS, json=new).status_code == 201
    old = core_v1("sel-old")
    old["source"] = {"component": "sel-kubelet"}
    assert http.post(CORE, json=old).status_code == 201
    for path, selector, expected in (
        (EVENTS, "regarding.name=sel-target", {"sel-new"}),
        (EVENTS, "regarding.kind=Secret,reason=Tested", {"sel-new"}),
        (EVENTS, "reportingController=example.com/selector", {"sel-new"}),
        (EVENTS, "source=sel-kubelet", {"sel-old"}),
        (CORE, "involvedObject.name=sel-target", {"sel-new"}),
        (CORE, "reportingComponent=example.com/selector", {"sel-new"}),
        (CORE, "source=example.com/selector", {"sel-new"}),
        (CORE, "source=sel-kubelet,type=Warning", {"sel-old"}),
    ):
        assert names(http.get(path, params={"fieldSelector": selector})) == expected, selector
    for path, label in ((EVENTS, "involvedObject.name"), (CORE, "regarding.name")):
        refused = http.get(path, params={"fieldSelector": f"{label}=x"})
        assert refused.status_code == 400
        assert refused.json()["message"] == f"field label not supported: {label}"
    since = http.get(EVENTS).json()["metadata"]["resourceVersion"]

    def write() -> None:
        http.post(EVENTS, json=events_v1("sel-unwatched")).raise_for_status()
        watched = {**target, "name": "sel-watched"}
        http.post(EVENTS, json=events_v1("sel-watched", regarding=watched)).raise_for_status()

    seen = watch_first(http, EVENTS, since, write, "regarding.name=sel-watched")
    assert seen["object"]["metadata"]["name"] == "sel-watched"


@pytest.mark.parametrize("minor", [33, 27])
def test_kubectl_prints_events_v1_with_kube_s_event_columns(
    http: httpx.Client, server: ServerProcess, tmp_path: Path, minor: int
) -> None:
    """kube prints events.k8s.io/v1 Events with core's printEvent (both are the internal core Event): the
    series gives LAST SEEN and COUNT, the reporting controller and instance the SOURCE; a field selector
    in events.k8s.io's words picks the rows."""
    name = f"print-{minor}"
    regarding = {"kind": "Service", "apiVersion": "v1", "name": name, "namespace": NAMESPACE}
    earlier = datetime.now(UTC) - timedelta(minutes=30)
    series = {"count": 4, "lastObservedTime": stamp(datetime.now(UTC), micro=True)}
    event = events_v1(name, earlier, regarding=regarding, note=" scaled  ", series=series)
    assert http.post(EVENTS, json=event).status_code == 201
    kubectl = Kubectl(kubectl_binary(minor), server.kubeconfig, tmp_path, NAMESPACE)
    selector = f"--field-selector=regarding.name={name}"
    narrow = cells(kubectl.run("get", "events.events.k8s.io", selector).stdout)
    assert narrow[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert narrow[1][1:] == ["Normal", "Tested", f"service/{name}", "scaled"]
    assert narrow[1][0].endswith("s") and len(narrow) == 2, narrow
    wide = cells(kubectl.run("get", "events.events.k8s.io", selector, "-o", "wide").stdout)
    assert wide[0] == EVENT_COLUMNS
    assert wide[1][4:] == [
        "",
        "example.com/tester, tester-0",
        "scaled",
        "30m",
        "4",
        name,
    ]
    listed = kubectl.run("events", "--for", f"Service/{name}").stdout
    assert "scaled" in listed and "(x4 over 30m)" in listed, listed


def test_tables_hold_go_values_not_nulls(http: httpx.Client) -> None:
    """kube's printer cells are the Go fields: an event without a type or a fieldPath prints "" (what
    the Python client reads), not the null of a JSONPath column."""
    bare = core_v1("untyped")
    del bare["type"]
    assert http.post(CORE, json=bare).status_code == 201
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    for path in (CORE, EVENTS):
        table = http.get(f"{path}/untyped", headers=accept).json()
        assert len(table["columnDefinitions"]) == len(EVENT_COLUMNS)
        (row,) = table["rows"]
        assert row["cells"][1] == row["cells"][4] == "", row["cells"]
        assert row["cells"][3] == "configmap/cm"
