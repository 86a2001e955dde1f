"""One server's metrics: what each request, watch event and storage call adds, and the gauges read when
scraped. A registry per server (not prometheus-client's global one), so servers built in one process (the
tests') count apart.

Per-request cost is kept small: the labelled children are kept in a dict keyed by the label values, so a
request costs a dict lookup, a counter increment and a histogram observation, both without a lock
(``series``).
Gauges of current state (in-flight requests, stored objects, watchers) are not updated on every change but
read from their owners when scraped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Final

from prometheus_client import (
    CollectorRegistry,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from apiserver.metrics import series

disable_created_metrics()  # type: ignore[no-untyped-call]
"""kube's metrics (component-base, on Prometheus's Go client) have no ``_created`` series; prometheus-client's
counters and histograms add one each unless told not to (a process-wide switch)."""

COMPONENT: Final = "apiserver"
"""kube's APIServerComponent label value."""
LATENCY_BUCKETS: Final = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
)  # fmt: skip
"""kube's requestLatencies buckets, which etcd_request_duration_seconds shares (endpoints/metrics/metrics.go,
storage/etcd3/metrics/metrics.go: "keep consistent with apiserver metric 'requestLatencies'")."""
REQUEST_LABELS: Final = (
    "verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component",
)  # fmt: skip
READ_ONLY: Final = "readOnly"
MUTATING: Final = "mutating"

RequestLabels = tuple[str, str, str, str, str, str, str, str]
"""The values of REQUEST_LABELS, in that order."""
Recorder = Callable[[float], None]
"""Counts one finished request and observes its duration in seconds."""
ObjectCounts = Callable[[], Iterable[tuple[str, int]]]
"""(resource as kube names it, e.g. ``crontabs.stable.example.com``, number of stored objects)."""
WatchKind = tuple[str, str, str]
"""(group, version, kind)."""


class Metrics:
    """The metrics of one server."""

    def __init__(self, object_counts: ObjectCounts = tuple) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.object_counts = object_counts
        """Read when scraped: every resource stored now, those added at run time (CRDs) included."""
        self.in_flight = {READ_ONLY: 0, MUTATING: 0}
        self.watchers: dict[WatchKind, int] = {}
        # recorded on the event loop's thread by every request: without prometheus-client's locks
        self._requests = series.CounterFamily(
            "apiserver_request",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version,"
            " resource, scope, component, and HTTP response code.",
            (*REQUEST_LABELS, "code"),
        )
        self._latencies = series.HistogramFamily(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version,"
            " resource, subresource, scope and component.",
            REQUEST_LABELS,
            LATENCY_BUCKETS,
        )
        self.registry.register(self._requests)
        self.registry.register(self._latencies)
        # counted by every write to every watcher: a lock-free series, as the requests' are
        self._watch_events = series.CounterFamily(
            "apiserver_watch_events",
            "Number of events sent in watch clients",
            ("group", "version", "kind"),
        )
        self.registry.register(self._watch_events)
        self._storage = series.HistogramFamily(  # timed on the event loop's thread too
            "etcd_request_duration_seconds",
            "Etcd request latency in seconds for each operation and object type."
            " (apiforge: the storage backend's, etcd or SQLite.)",
            ("operation", "type"),
            LATENCY_BUCKETS,
        )
        self.registry.register(self._storage)
        self._counted: dict[tuple[RequestLabels, int], Recorder] = {}
        self._timed: dict[tuple[str, str], Callable[[float], None]] = {}
        self.registry.register(_StateCollector(self))
        ProcessCollector(
            registry=self.registry
        )  # process_cpu_seconds_total &c., as kube exposes them

    def recorder(self, labels: RequestLabels, code: int) -> Recorder:
        """What counts a finished request of these labels and code and observes its duration (the
        metrics filter keeps it per request info)."""
        record = self._counted.get((labels, code))
        if record is None:
            record = self._counted[(labels, code)] = self._new_recorder(labels, code)
        return record

    def _new_recorder(self, labels: RequestLabels, code: int) -> Recorder:
        count = self._requests.child((*labels, str(code))).inc
        observe = self._latencies.observer(labels)

        def record(seconds: float) -> None:
            count()
            observe(seconds)

        return record

    def storage_call(self, operation: str, type_: str, seconds: float) -> None:
        """One storage request's duration (kube's RecordEtcdRequest)."""
        self.storage_timer(operation, type_)(seconds)

    def storage_timer(self, operation: str, type_: str) -> Callable[[float], None]:
        """What observes the durations of ``operation`` on ``type_``: kept by a caller that times many."""
        observe = self._timed.get((operation, type_))
        if observe is None:
            observe = self._timed[(operation, type_)] = self._storage.observer((operation, type_))
        return observe

    @contextmanager
    def watcher(self, kind: WatchKind) -> Iterator[Callable[[int], None]]:
        """Around one watch: counted as a registered watcher while it lasts; yields what counts the
        events it sends."""
        self.watchers[kind] = self.watchers.get(kind, 0) + 1
        try:
            yield self._watch_events.child(kind).add
        finally:
            self.watchers[kind] -= 1

    def exposition(self) -> bytes:
        """The Prometheus text format (0.0.4) of every metric."""
        return generate_latest(self.registry)


class _StateCollector(Collector):
    """The gauges, read from their owners when scraped."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        metrics = self.metrics
        in_flight = GaugeMetricFamily(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per request"
            " kind in last second.",
            labels=("request_kind",),
        )
        for kind, count in metrics.in_flight.items():
            in_flight.add_metric((kind,), count)
        objects = GaugeMetricFamily(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            labels=("resource",),
        )
        for resource, count in sorted(metrics.object_counts()):
            objects.add_metric((resource,), count)
        watchers = GaugeMetricFamily(
            "apiserver_registered_watchers",
            "Number of currently registered watchers for a given resources",
            labels=("group", "version", "kind"),
        )
        for watched, count in sorted(metrics.watchers.items()):
            watchers.add_metric(watched, count)
        return (in_flight, objects, watchers)
