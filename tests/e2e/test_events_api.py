"""events.k8s.io/v1 Event beside core v1, from the same storage as kube serves it (events are stored once,
under /registry/events; pkg/apis/events/v1/conversion.go converts): what one API writes the other reads,
lists and watches, kubectl 1.33 and the `kubernetes` Python client see both, a create through events.k8s.io
is held to kube's strict ValidateEventCreate. (--event-ttl on both: tests/unit/builtin/test_event_ttl.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from kubernetes import client, config

from tests.kubectl import Kubectl, kubectl_binary
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
    http: httpx.Client, path: str, since: str, write: Callable[[], None]
) -> dict[str, Any]:
    with http.stream("GET", path, params={"watch": "1", "resourceVersion": since}) as stream:
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
    """kube's ValidateEventCreate: reportingController, reportingInstance, action, reason and eventTime are
    required of an events.k8s.io/v1 create; the deprecated fields stay unset."""
    bare = events_v1("strict")
    for field in ("reportingController", "reportingInstance", "action", "reason", "eventTime"):
        del bare[field]
    refused = http.post(EVENTS, json=bare)
    assert refused.status_code == 422, refused.text
    assert refused.json()["reason"] == "Invalid"
    assert {"reportingController", "reportingInstance", "action", "reason", "eventTime"} <= causes(
        refused
    )
    deprecated = http.post(EVENTS, json=events_v1("strict", deprecatedCount=3))
    assert deprecated.status_code == 422
    assert "count" in causes(deprecated)
    assert http.post(CORE, json=core_v1("lenient")).status_code == 201
