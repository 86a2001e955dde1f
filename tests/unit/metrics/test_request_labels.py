"""The labels of a request's metrics, as kube's MonitorRequest derives them (k8s.io/apiserver/pkg/endpoints/metrics
metrics.go: CleanScope, cleanVerb, cleanDryRun), and the exposition of a fresh registry."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from apiserver.endpoints.routing import request_info
from apiserver.filters.metrics import _labels
from apiserver.metrics.registry import LATENCY_BUCKETS, Metrics


def labels(
    method: str, path: str, query: bytes = b"", content_type: bytes = b""
) -> tuple[str, ...]:
    scope = {"query_string": query, "headers": [(b"content-type", content_type)]}
    return _labels(scope, request_info(method, path, query))


@pytest.mark.parametrize(
    ("method", "path", "query", "verb", "scope"),
    [
        ("GET", "/api/v1/namespaces", b"", "LIST", "cluster"),
        ("GET", "/api/v1/namespaces/default", b"", "GET", "resource"),
        ("GET", "/api/v1/namespaces/default/configmaps", b"", "LIST", "namespace"),
        ("GET", "/api/v1/namespaces/default/configmaps", b"watch=true", "WATCH", "namespace"),
        ("POST", "/api/v1/namespaces/default/configmaps", b"", "POST", "resource"),
        ("PUT", "/api/v1/namespaces/default/configmaps/a", b"", "PUT", "resource"),
        ("DELETE", "/api/v1/namespaces/default/configmaps", b"", "DELETECOLLECTION", "namespace"),
        ("DELETE", "/api/v1/namespaces/default/configmaps/a", b"", "DELETE", "resource"),
    ],
)
def test_verb_and_scope(method: str, path: str, query: bytes, verb: str, scope: str) -> None:
    got = labels(method, path, query)
    assert (got[0], got[6], got[7]) == (verb, scope, "apiserver")


def test_apply_is_its_own_verb_and_a_merge_patch_is_not() -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/web/scale"
    applied = labels("PATCH", path, content_type=b"application/apply-patch+yaml; charset=utf-8")
    assert applied[:6] == ("APPLY", "", "apps", "v1", "deployments", "scale")
    assert labels("PATCH", path, content_type=b"application/merge-patch+json")[0] == "PATCH"


@pytest.mark.parametrize(
    ("query", "dry_run"),
    [(b"", ""), (b"dryRun=All", "All"), (b"dryRun=All&dryRun=All", "All"), (b"dryRun=bogus", "invalid"),
     (b"dryRun=", "invalid")],
)  # fmt: skip
def test_dry_run(query: bytes, dry_run: str) -> None:
    assert labels("POST", "/api/v1/namespaces", query)[1] == dry_run


def test_a_fresh_registry_exposes_every_family_with_kube_buckets() -> None:
    metrics = Metrics(lambda: [("namespaces", 4)])
    metrics.recorder(("GET", "", "", "v1", "namespaces", "", "resource", "apiserver"), 200)(0.003)
    metrics.storage_call("get", "namespaces", 0.0001)
    with metrics.watcher(("", "v1", "Namespace")) as sent:
        sent(3)
        text = metrics.exposition().decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert {
        "apiserver_request",
        "apiserver_request_duration_seconds",
        "apiserver_current_inflight_requests",
        "apiserver_storage_objects",
        "apiserver_watch_events",
        "apiserver_registered_watchers",
        "etcd_request_duration_seconds",
        "process_cpu_seconds",
    } <= set(families)
    buckets = [
        sample.labels["le"]
        for sample in families["apiserver_request_duration_seconds"].samples
        if sample.name.endswith("_bucket")
    ]
    assert buckets == [*(str(float(b)) for b in LATENCY_BUCKETS), "+Inf"]
    assert 'apiserver_storage_objects{resource="namespaces"} 4.0' in text
    assert 'apiserver_registered_watchers{group="",kind="Namespace",version="v1"} 1.0' in text
    assert 'apiserver_watch_events_total{group="",kind="Namespace",version="v1"} 3.0' in text
    assert metrics.watchers[("", "v1", "Namespace")] == 0  # unregistered when the watch ends
    # kube's metrics (component-base, Prometheus's Go client) have no _created series
    assert "_created" not in text
