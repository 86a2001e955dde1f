"""Phase 2: LIST of 10,000 CronTabs, one at a time, from the watch cache (``resourceVersion=0``) against the
same list from storage (an exact revision, which never goes to the cache)."""

from __future__ import annotations

from collections.abc import Callable

from bench.engine.sample import Phase, Sample
from bench.engine.servers import Engine
from bench.engine.settings import LIST_REQUESTS, LIST_SECONDS, STORAGES
from bench.loadgen import get_request


def list_phases(engine: Engine) -> dict[Phase, Callable[[], Sample]]:
    phases: dict[Phase, Callable[[], Sample]] = {}
    for name in STORAGES:
        for label, path in engine.list_paths(name).items():
            phases[name, label] = lambda n=name, p=path: _list(engine, n, p)  # type: ignore[misc]
    return phases


def _list(engine: Engine, name: str, path: str) -> Sample:
    return engine.drive(
        name, get_request(path), connections=1, seconds=LIST_SECONDS, limit=LIST_REQUESTS
    )
