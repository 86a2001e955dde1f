"""The built-in kinds' cells, modelled on kube's pkg/printers/internalversion/printers_test.go (TestPrintService,
TestPrintEvent, TestPrintRoleBinding...): each function against the cell kube's printer computes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from builtin import printers
from builtin.core import printers as core
from builtin.events import printers as events
from builtin.rbac import printers as rbac

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def service(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "test"}, "spec": spec, "status": status or {}}


@pytest.mark.parametrize(
    ("spec", "status", "want"),
    [
        (  # name, cluster ip, port with protocol; the selector is wide only
            {
                "type": "ClusterIP",
                "ports": [{"protocol": "TCP", "port": 2233}],
                "clusterIPs": ["10.9.8.7"],
            },
            None,
            ("10.9.8.7", "<none>", "2233/TCP"),
        ),
        (  # port:nodePort
            {
                "type": "NodePort",
                "ports": [{"protocol": "TCP", "port": 8888, "nodePort": 9999}],
                "clusterIPs": ["10.9.8.7"],
            },
            None,
            ("10.9.8.7", "<none>", "8888:9999/TCP"),
        ),
        (  # several ports, external IPs of a ClusterIP service
            {
                "type": "ClusterIP",
                "ports": [{"protocol": "TCP", "port": 2233}, {"protocol": "UDP", "port": 5566}],
                "clusterIPs": ["10.9.8.7"],
                "externalIPs": ["80.11.12.10"],
            },
            None,
            ("10.9.8.7", "80.11.12.10", "2233/TCP,5566/UDP"),
        ),
        (  # a load balancer's ingress addresses (sorted, IP before hostname), then the external IPs
            {
                "type": "LoadBalancer",
                "ports": [{"protocol": "TCP", "port": 8888}],
                "clusterIPs": ["10.9.8.7"],
                "externalIPs": ["80.11.12.10"],
            },
            {
                "loadBalancer": {
                    "ingress": [{"ip": "3.4.5.6", "hostname": "x"}, {"hostname": "lb.io"}]
                }
            },
            ("10.9.8.7", "3.4.5.6,lb.io,80.11.12.10", "8888/TCP"),
        ),
        (  # a load balancer without an address yet, a service without ports or cluster IP
            {"type": "LoadBalancer"},
            None,
            ("<none>", "<pending>", "<none>"),
        ),
        (
            {"type": "ExternalName", "externalName": "my.database.example.com"},
            None,
            ("<none>", "my.database.example.com", "<none>"),
        ),
    ],
)
def test_service_cells(
    spec: dict[str, Any], status: dict[str, Any] | None, want: tuple[str, str, str]
) -> None:
    obj = service(spec, status)
    got = (
        core.service_cluster_ip(obj, NOW),
        core.service_external_ip(obj, NOW),
        core.service_ports(obj, NOW),
    )
    assert got == want


def test_service_selector_is_formatted_as_labels() -> None:
    """labels.FormatLabels: sorted k=v pairs, <none> when empty."""
    assert (
        core.service_selector(service({"selector": {"foo": "bar", "a": "b"}}), NOW) == "a=b,foo=bar"
    )
    assert core.service_selector(service({}), NOW) == "<none>"


def test_data_counts() -> None:
    assert core.data_count({"data": {"a": "", "b": ""}}, NOW) == 2
    assert core.data_count({}, NOW) == 0
    assert core.config_map_data_count({"data": {"a": ""}, "binaryData": {"b": ""}}, NOW) == 2
    assert core.secrets_count({"secrets": [{"name": "x"}]}, NOW) == 1


def test_event_cells() -> None:
    """printEvent: kind/name lower-cased, source and reporting fallbacks, count 1 for a singleton of the new
    API, the series' count and last observation when it has one."""
    event = {
        "involvedObject": {"kind": "Pod", "name": "foo"},
        "source": {"component": "kubelet"},
        "reportingInstance": "node-1",
        "message": "\n  Item 1 \n",
        "firstTimestamp": "2025-12-31T00:00:00Z",
        "lastTimestamp": "2025-12-31T23:00:00Z",
    }
    assert core.event_object(event, NOW) == "pod/foo"
    assert core.event_object({"involvedObject": {"kind": "Node"}}, NOW) == "node"
    assert core.event_source(event, NOW) == "kubelet, node-1"
    assert core.event_source({"reportingComponent": "ctrl"}, NOW) == "ctrl"
    assert core.event_message(event, NOW) == "Item 1"
    assert (core.event_first_seen(event, NOW), core.event_last_seen(event, NOW)) == ("24h", "60m")
    assert core.event_count(event, NOW) == 1
    series = {"eventTime": "2025-12-31T00:00:00.000000Z", "series": {"count": 4}}
    assert core.event_count(series, NOW) == 4
    assert core.event_first_seen(series, NOW) == "24h"
    assert core.event_last_seen(series, NOW) == "<unknown>"  # a series without lastObservedTime


def test_events_v1_cells_are_core_s_through_its_names() -> None:
    """An events.k8s.io/v1 Event prints as its internal core Event (regarding, note, deprecatedSource,
    reportingController); unset strings are "" as in Go, never a JSONPath null."""
    event = {
        "regarding": {"kind": "Pod", "name": "foo", "fieldPath": "spec.containers{a}"},
        "reportingController": "example.com/c",
        "reportingInstance": "c-0",
        "note": " noted ",
        "eventTime": "2025-12-31T23:00:00.000000Z",
        "deprecatedCount": 0,
    }
    assert events.event_object(event, NOW) == "pod/foo"
    assert events.event_subobject(event, NOW) == "spec.containers{a}"
    assert events.event_source(event, NOW) == "example.com/c, c-0"
    assert events.event_message(event, NOW) == "noted"
    assert (events.event_first_seen(event, NOW), events.event_last_seen(event, NOW)) == (
        "60m",
        "60m",
    )
    assert events.event_count(event, NOW) == 1
    old = {"deprecatedSource": {"component": "kubelet"}, "deprecatedCount": 3}
    assert (events.event_source(old, NOW), events.event_count(old, NOW)) == ("kubelet", 3)
    assert core.event_type({}, NOW) == core.event_reason({}, NOW) == ""
    assert events.event_subobject({}, NOW) == ""


def test_binding_cells() -> None:
    binding = {
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "u1"},
            {"kind": "Group", "name": "g1"},
            {"kind": "User", "name": "u2"},
            {"kind": "ServiceAccount", "namespace": "ns", "name": "sa"},
        ],
    }
    assert rbac.role(binding, NOW) == "ClusterRole/view"
    assert rbac.users(binding, NOW) == "u1, u2"
    assert rbac.groups(binding, NOW) == "g1"
    assert rbac.service_accounts(binding, NOW) == "ns/sa"
    assert rbac.users({}, NOW) == ""


def test_age_and_creation_time() -> None:
    created = {"metadata": {"creationTimestamp": "2025-12-31T22:00:00+01:00"}}
    assert printers.age(created, NOW) == "3h"
    assert printers.age({"metadata": {}}, NOW) == "<unknown>"
    assert printers.created_at(created, NOW) == "2025-12-31T21:00:00Z"
