"""The lock-free request series expose exactly what prometheus-client's own counter and histogram expose for
the same observations (the reference), bucket bounds and values past every bound included."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from apiserver.metrics import series
from apiserver.metrics.registry import LATENCY_BUCKETS

OBSERVATIONS = [
    pytest.param([], id="none"),
    pytest.param([0.0, 0.005, 0.0050001], id="on and past the first bound"),
    pytest.param([2, 2.0000001, 60, 60.5, 1e9], id="integer bounds and past the last"),
    pytest.param([0.3] * 5 + [0.001], id="repeated"),
]


@pytest.mark.parametrize("values", OBSERVATIONS)
def test_the_text_is_prometheus_clients(values: list[float]) -> None:
    reference, ours = CollectorRegistry(auto_describe=False), CollectorRegistry(auto_describe=False)
    counter = Counter("requests_total", "Requests.", ("verb", "code"), registry=reference)
    histogram = Histogram(
        "latency_seconds", "Latency.", ("verb",), buckets=LATENCY_BUCKETS, registry=reference
    )
    counters = series.CounterFamily("requests", "Requests.", ("verb", "code"))
    histograms = series.HistogramFamily("latency_seconds", "Latency.", ("verb",), LATENCY_BUCKETS)
    ours.register(counters)
    ours.register(histograms)
    for value in values:
        for verb in ("GET", "LIST"):
            counter.labels(verb, "200").inc()
            histogram.labels(verb).observe(value)
            counters.child((verb, "200")).inc()
            histograms.observer((verb,))(value)
    assert generate_latest(ours).decode() == generate_latest(reference).decode()
