"""Phase 3: watch fan-out on the SQLite server, 1,000 watchers of one namespace's CronTabs and one writer,
without and with one more watcher that never reads."""

from __future__ import annotations

import orjson

from bench.engine.plainhttp import http
from bench.engine.servers import Engine
from bench.engine.settings import FAN_NS, FAN_RATE, FAN_WATCHERS, FAN_WRITES, collection
from bench.server_bench import crontab
from bench.watch_fanout import FanResult, fan_out


def fan_out_run(engine: Engine, stalled: bool, watchers: int = FAN_WATCHERS) -> FanResult:
    """One fan-out run from the namespace's current revision, with a stalled watcher or without."""
    server = engine.servers["sqlite"]
    engine.runs += 1
    tag = f"fan{engine.runs}"
    _status, body = http(server.port, "GET", f"{collection(FAN_NS)}?limit=1")
    revision = orjson.loads(body)["metadata"]["resourceVersion"]
    watch = f"{collection(FAN_NS)}?watch=true&resourceVersion={revision}&timeoutSeconds=600"
    template = orjson.dumps(crontab("NAME-PLACEHOLDER"))
    return fan_out(
        server.port,
        watch,
        collection(FAN_NS),
        tag,
        lambda i: template.replace(b"NAME-PLACEHOLDER", f"{tag}-{i}".encode()),
        watchers=watchers,
        writes=FAN_WRITES,
        rate=FAN_RATE,
        stalled=stalled,
        server_pid=server.pid,
    )


def fan_runs(engine: Engine, fan_rounds: int) -> dict[bool, list[FanResult]]:
    """Fan-out runs without and with the stalled watcher, alternating which goes first."""
    fans: dict[bool, list[FanResult]] = {False: [], True: []}
    for round_number in range(fan_rounds):
        for stalled in (False, True) if round_number % 2 == 0 else (True, False):
            fans[stalled].append(fan_out_run(engine, stalled))
    return fans
