"""Request counts and latencies kept as plain numbers, folded into Prometheus families only when scraped.

prometheus-client's children take a lock for every increment and observation (they may be shared between
threads); a request's metrics are recorded on the event loop's thread only, so each labelled series here is a
list of counts that a request bumps without a lock: an index found by bisection, two additions. The text a
scrape reads is the same as the client's own counters and histograms give (names, ``le`` values, sums).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString


class Histogram:
    """One labelled series: the count per bucket (the last past every bound: ``+Inf``) and the sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        """Prometheus's ``le``: a value equal to a bound falls in that bound's bucket."""
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value


class Counter:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def inc(self) -> None:
        self.value += 1

    def add(self, amount: int) -> None:
        self.value += amount


class CounterFamily(Collector):
    """A counter's series by label values (``name`` without ``_total``, as the client names it)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self.name, self.documentation, self.labels = name, documentation, labels
        self.series: dict[tuple[str, ...], Counter] = {}

    def child(self, values: tuple[str, ...]) -> Counter:
        series = self.series.get(values)
        if series is None:
            series = self.series[values] = Counter()
        return series

    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for values, counter in list(self.series.items()):
            family.add_metric(values, counter.value)
        return (family,)


class HistogramFamily(Collector):
    """A histogram's series by label values."""

    def __init__(
        self, name: str, documentation: str, labels: Sequence[str], bounds: Sequence[float]
    ) -> None:
        self.name, self.documentation, self.labels = name, documentation, labels
        self.bounds = tuple(float(bound) for bound in bounds)
        self._le = [floatToGoString(b) for b in self.bounds] + ["+Inf"]  # type: ignore[no-untyped-call]
        self.series: dict[tuple[str, ...], Histogram] = {}

    def child(self, values: tuple[str, ...]) -> Histogram:
        series = self.series.get(values)
        if series is None:
            series = self.series[values] = Histogram(self.bounds)
        return series

    def observer(self, values: tuple[str, ...]) -> Callable[[float], None]:
        return self.child(values).observe

    def collect(self) -> Iterable[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labels)
        for values, histogram in list(self.series.items()):
            cumulative, buckets = 0, []
            for le, count in zip(self._le, histogram.counts, strict=True):
                cumulative += count
                buckets.append((le, cumulative))
            family.add_metric(list(values), buckets, histogram.sum)
        return (family,)
