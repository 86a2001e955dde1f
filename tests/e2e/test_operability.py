"""/metrics, /livez, /readyz, /healthz, the index at / and resourceVersion semantics of a real server, as
Prometheus, kubectl, the kubernetes Python client and a load balancer use them.

The metric names, labels and buckets are kube-apiserver's (k8s.io/apiserver/pkg/endpoints/metrics/metrics.go,
pkg/storage/etcd3/metrics/metrics.go); /metrics is authorized as kube's bootstrap policy authorizes it
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: the ``system:monitoring`` ClusterRole, bound to
the group of that name); the exposition is parsed by prometheus-client's own parser, as a scraper would."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.kubectl import Kubectl, kubectl_binary
from tests.serverproc import ServerProcess, free_port

CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"
CRONTAB = {
    "apiVersion": "stable.example.com/v1",
    "kind": "CronTab",
    "metadata": {"name": "measured"},
    "spec": {"cronSpec": "* * * * */5", "image": "img:1", "replicas": 1},
}
KUBE_BUCKETS = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
]  # fmt: skip
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: httpx.Client, **headers: str) -> Samples:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def request_labels(verb: str, resource: str = "crontabs", **overrides: str) -> dict[str, str]:
    labels = {
        "verb": verb,
        "dry_run": "",
        "group": "stable.example.com",
        "version": "v1",
        "resource": resource,
        "subresource": "",
        "scope": "namespace",
        "component": "apiserver",
    }
    return {**labels, **overrides}


def test_requests_are_counted_and_timed_with_kube_labels(client: httpx.Client) -> None:
    before = scrape(client)
    assert client.post(CRONTABS, json=CRONTAB).status_code == 201
    assert (
        client.post(
            f"{CRONTABS}?dryRun=All", json={**CRONTAB, "metadata": {"name": "dry"}}
        ).status_code
        == 201
    )
    assert client.get(CRONTABS).status_code == 200
    assert client.get(f"{CRONTABS}/missing").status_code == 404
    apply = client.patch(
        f"{CRONTABS}/measured?fieldManager=metrics-test",
        content=b'{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "measured"}}',
        headers={"content-type": "application/apply-patch+yaml"},
    )
    assert apply.status_code == 200, apply.text
    after = scrape(client)

    def grew(name: str, labels: dict[str, str], by: float = 1) -> None:
        assert value(after, name, **labels) - value(before, name, **labels) == by, (name, labels)

    # kube's CleanScope: a create or a named object is "resource", a namespaced list "namespace"
    grew("apiserver_request_total", {**request_labels("POST", scope="resource"), "code": "201"})
    grew(
        "apiserver_request_total",
        {**request_labels("POST", scope="resource", dry_run="All"), "code": "201"},
    )
    grew("apiserver_request_total", {**request_labels("LIST"), "code": "200"})
    grew("apiserver_request_total", {**request_labels("GET", scope="resource"), "code": "404"})
    grew("apiserver_request_total", {**request_labels("APPLY", scope="resource"), "code": "200"})
    grew("apiserver_request_duration_seconds_count", request_labels("LIST"))
    buckets = sorted(
        float(dict(labels)["le"])
        for (name, labels) in after
        if name == "apiserver_request_duration_seconds_bucket"
        and labels >= frozenset(request_labels("LIST").items())
    )
    assert buckets == [*KUBE_BUCKETS, float("inf")]
    assert value(after, "apiserver_storage_objects", resource="crontabs.stable.example.com") == 1
    assert value(after, "apiserver_storage_objects", resource="namespaces") >= 4  # default, kube-*
    # the storage is timed under kube's name whatever the backend (SQLite here)
    assert value(
        after, "etcd_request_duration_seconds_count",
        operation="create", type="crontabs.stable.example.com",
    ) - value(
        before, "etcd_request_duration_seconds_count",
        operation="create", type="crontabs.stable.example.com",
    ) == 1  # fmt: skip
    # the scrape itself is a read-only request in flight
    assert value(after, "apiserver_current_inflight_requests", request_kind="readOnly") == 1
    assert value(after, "apiserver_current_inflight_requests", request_kind="mutating") == 0


def test_watchers_and_their_events(server: ServerProcess, client: httpx.Client) -> None:
    kind = {"group": "stable.example.com", "version": "v1", "kind": "CronTab"}
    before = scrape(client)
    assert value(before, "apiserver_registered_watchers", **kind) == 0
    with (
        server.client(timeout=10) as watching,
        watching.stream("GET", f"{CRONTABS}?watch=true&resourceVersion=0") as stream,
    ):
        lines = stream.iter_lines()  # the headers are in: the server is watching
        during = scrape(client)
        assert value(during, "apiserver_registered_watchers", **kind) == 1
        created = {**CRONTAB, "metadata": {"name": "watched"}}
        assert client.post(CRONTABS, json=created).status_code == 201
        while '"watched"' not in next(lines):
            pass
        after = scrape(client)
    sent = value(after, "apiserver_watch_events_total", **kind) - value(
        before, "apiserver_watch_events_total", **kind
    )
    assert sent >= 1
    deadline = time.monotonic() + 10
    while value(scrape(client), "apiserver_registered_watchers", **kind) != 0:
        assert time.monotonic() < deadline, "the watcher was never unregistered"
        time.sleep(0.05)
    final = scrape(client)
    assert value(final, "apiserver_request_total", **request_labels("WATCH"), code="200") >= 1


@pytest.mark.parametrize(
    ("groups", "status"),
    [((), 403), (("system:monitoring",), 200)],
    ids=["plain-user", "system-monitoring"],
)
def test_metrics_are_authorized_as_kube_bootstraps_them(
    client: httpx.Client, groups: tuple[str, ...], status: int
) -> None:
    headers = {"Impersonate-User": "prometheus"}
    response = client.get(
        "/metrics",
        headers=[*headers.items(), *(("Impersonate-Group", group) for group in groups)],
    )
    assert response.status_code == status, response.text
    if status == 403:
        assert response.json()["message"] == (
            'forbidden: User "prometheus" cannot get path "/metrics"'
        )
    else:  # kube's system:monitoring also reads each named check
        named = client.get(
            "/readyz/etcd",
            headers=[*headers.items(), *(("Impersonate-Group", group) for group in groups)],
        )
        assert (named.status_code, named.text) == (200, "ok")


def test_anonymous_reads_health_but_not_metrics(server: ServerProcess) -> None:
    with server.anonymous_client() as anonymous:
        assert anonymous.get("/readyz").text == "ok"
        assert anonymous.get("/metrics").status_code == 403


def test_kubectl_reads_metrics_and_verbose_readiness(server: ServerProcess, tmp_path: Path) -> None:
    kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path)
    metrics = kubectl.run("get", "--raw", "/metrics").stdout
    assert "# TYPE apiserver_request_total counter" in metrics
    assert "# TYPE apiserver_request_duration_seconds histogram" in metrics
    readyz = kubectl.run("get", "--raw", "/readyz?verbose").stdout
    assert readyz.startswith("[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]informer-sync ok\n")
    assert "[+]poststarthook/rbac/bootstrap-roles ok\n" in readyz
    assert readyz.endswith("[+]shutdown ok\nreadyz check passed\n")
    excluded = kubectl.run("get", "--raw", "/readyz?verbose&exclude=etcd").stdout
    assert "[+]etcd excluded: ok\n" in excluded
    unknown = kubectl.run("get", "--raw", "/readyz/bogus", check=False)
    assert unknown.returncode != 0 and "NotFound" in unknown.stderr


@pytest.fixture
def draining(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path, free_port(), extra_args=("--shutdown-delay-duration=2s",))
    process.start()
    yield process
    process.stop(signal.SIGKILL)


def test_shutdown_delay_fails_readiness_while_still_serving(draining: ServerProcess) -> None:
    """kube's ShutdownDelayDuration: after SIGTERM, /readyz fails at once (so load balancers stop sending)
    while every request is still served, and the process exits cleanly when the delay is over."""
    assert draining.process is not None
    with draining.client(timeout=5) as client:
        draining.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        deadline = signalled + 1.5
        while (ready := client.get("/readyz")).status_code == 200:
            assert time.monotonic() < deadline, "readiness never failed"
            time.sleep(0.02)
        assert ready.status_code == 500
        assert ready.text.endswith("[-]shutdown failed: reason withheld\nreadyz check failed\n")
        assert client.get("/livez").text == "ok"
        assert client.get("/api/v1/namespaces/default").status_code == 200
    assert draining.process.wait(timeout=15) == 0
    assert time.monotonic() - signalled >= 1.5  # it served on through the delay


def test_kubectl_reads_the_index(server: ServerProcess, tmp_path: Path) -> None:
    kubectl = Kubectl(kubectl_binary(33), server.kubeconfig, tmp_path)
    paths = json.loads(kubectl.run("get", "--raw", "/").stdout)["paths"]
    assert {"/api", "/apis", "/healthz", "/metrics", "/readyz/etcd", "/version"} <= set(paths)


def test_resource_versions_over_http(client: httpx.Client) -> None:
    """A list at a future resourceVersion waits (kube: 3 s) and is 504 Too large resource version with
    Retry-After (client-go retries it); a bogus resourceVersionMatch is 422; an empty list is as of the
    current revision. (kubectl get --raw would retry the 504 ten times, as against kube.)"""
    now = int(client.get("/api/v1/namespaces").json()["metadata"]["resourceVersion"])
    started = time.monotonic()
    too_large = client.get("/api/v1/namespaces", params={"resourceVersion": str(now + 10**6)})
    assert time.monotonic() - started >= 2.9
    assert too_large.status_code == 504
    assert too_large.headers["retry-after"] == "1"
    status = too_large.json()
    assert status["reason"] == "Timeout"
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    invalid = client.get(
        "/api/v1/namespaces", params={"resourceVersion": "1", "resourceVersionMatch": "Newest"}
    )
    assert invalid.status_code == 422
    empty = client.get("/api/v1/namespaces/kube-public/configmaps").json()
    assert empty["items"] == [] and int(empty["metadata"]["resourceVersion"]) >= now
