"""Watch consistency under concurrent writers, over HTTP against a real server.

Informer-style watchers (LIST at a known resourceVersion, then WATCH from it) with different filters follow
CronTabs in two namespaces while writer threads create, update (with optimistic-concurrency conflicts and
retries), relabel and delete them. Afterwards each watcher's replayed state must equal a fresh LIST with the same
filter, every stream must be strictly ordered by resourceVersion without duplicates, events must make sense
(ADDED only for an object the watcher does not hold, MODIFIED and DELETED only for one it does: kube reports an
object entering or leaving a label selection as ADDED/DELETED), and a watch resumed from a resourceVersion in the
middle of a stream must replay exactly that stream's tail.

The end of the writes is marked by sentinel objects created after every writer has stopped, one per namespace
and chosen so that every watcher's filter selects at least one: once a watcher has seen its sentinels it has seen
every event before them, since streams are ordered.

The end of the module checks two behaviours this workload first showed wrong (now fixed): PATCHes without a
resourceVersion are retried on a storage conflict instead of being answered 409, and an object leaving a label
selection is sent as DELETED with its previous (still matching) content.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
import pytest

from tests.etcdproc import EtcdProcess
from tests.serverproc import ServerProcess, free_port

GROUP: Final = "/apis/stable.example.com/v1"
NAMESPACES: Final = ("consistency-a", "consistency-b")
POOL: Final = [f"ct-{i}" for i in range(6)]  # few names, so writers collide
WRITERS: Final = 4
WRITE_SECONDS: Final = 3.0
MAX_OPS_PER_WRITER: Final = 600
MIN_OPS_PER_WRITER: Final = 50
"""Each writer goes on past the deadline until it made this many writes: on a loaded machine three seconds may
hold far fewer, and a run of a handful of writes shows little."""
MERGE: Final = {"content-type": "application/merge-patch+json"}

Object = dict[str, Any]
Key = tuple[str, str]


def crontab(name: str, team: str, replicas: int = 1) -> Object:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "labels": {"team": team}},
        "spec": {"cronSpec": "*/5 * * * *", "image": "busybox", "replicas": replicas},
    }


def key_of(obj: Object) -> Key:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]


def rv(obj: Object) -> int:
    return int(obj["metadata"]["resourceVersion"])


@dataclass(frozen=True)
class Filter:
    """One watcher's view: a collection URL and a label selector, with the same predicate in Python to
    check the server's filtered LIST independently."""

    name: str
    path: str
    label_selector: str
    matches: Callable[[Object], bool]

    def params(self, **extra: str) -> dict[str, str]:
        query = {"labelSelector": self.label_selector} if self.label_selector else {}
        return {**query, **extra}


def _team(obj: Object) -> str | None:
    team: str | None = (obj["metadata"].get("labels") or {}).get("team")
    return team


FILTERS: Final = [
    Filter("everything", f"{GROUP}/crontabs", "", lambda o: True),
    Filter("team=blue", f"{GROUP}/crontabs", "team=blue", lambda o: _team(o) == "blue"),
    Filter(
        "namespace a",
        f"{GROUP}/namespaces/{NAMESPACES[0]}/crontabs",
        "",
        lambda o: o["metadata"]["namespace"] == NAMESPACES[0],
    ),
    Filter(
        "namespace b, team!=blue",
        f"{GROUP}/namespaces/{NAMESPACES[1]}/crontabs",
        "team!=blue",
        lambda o: o["metadata"]["namespace"] == NAMESPACES[1] and _team(o) != "blue",
    ),
]
# (namespace, team) of the sentinels: every filter above selects at least one of them
SENTINELS: Final = [(NAMESPACES[0], "blue"), (NAMESPACES[1], "red")]


def sentinel(namespace: str, team: str) -> Object:
    obj = crontab(f"sentinel-{team}", team)
    obj["metadata"]["namespace"] = namespace
    return obj


def sentinels_of(flt: Filter) -> frozenset[str]:
    return frozenset(
        sentinel(ns, team)["metadata"]["name"]
        for ns, team in SENTINELS
        if flt.matches(sentinel(ns, team))
    )


@dataclass
class Watcher:
    """A watch stream read on its own thread until every name in ``until`` has been seen, or else until the
    server ends it at ``timeout_seconds``."""

    server: ServerProcess
    filter: Filter
    start: str
    until: frozenset[str]
    timeout_seconds: int = 60
    events: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    connected: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start_thread(self) -> None:
        self.thread = threading.Thread(
            target=self._run, name=f"watch {self.filter.name}", daemon=True
        )
        self.thread.start()

    def _run(self) -> None:
        params = self.filter.params(
            watch="true", resourceVersion=self.start, timeoutSeconds=str(self.timeout_seconds)
        )
        seen: set[str] = set()
        try:
            with (
                self.server.client(timeout=httpx.Timeout(10, read=30)) as http,
                http.stream("GET", self.filter.path, params=params) as response,
            ):
                if response.status_code != 200:
                    self.error = f"watch answered {response.status_code}: {response.read()!r}"
                    return
                self.connected.set()
                for line in response.iter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    self.events.append(event)
                    if event["type"] == "ERROR":
                        self.error = f"ERROR event: {event['object']}"
                        return
                    seen.add(event["object"]["metadata"].get("name", ""))
                    if self.until and self.until <= seen:
                        return
            if self.until and not self.until <= seen:
                self.error = f"the stream ended before the sentinels {sorted(self.until - seen)}"
        except Exception as error:  # reported by the test, not as an unhandled thread exception
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self.connected.set()

    def join(self, timeout: float) -> bool:
        """Whether the thread has finished."""
        assert self.thread is not None
        self.thread.join(timeout)
        return not self.thread.is_alive()


@dataclass
class WriterStats:
    ops: int = 0
    conflicts: int = 0  # 409s to PUTs, retried
    unexpected: list[str] = field(default_factory=list)  # answers kube would not give
    # 409s to PATCHes without resourceVersion
    patch_conflicts: list[str] = field(default_factory=list)


def describe(response: httpx.Response) -> str:
    request = response.request
    return f"{request.method} {request.url.path}: {response.status_code} {response.text[:200]}"


def writer(server: ServerProcess, seed: int, deadline: float, stats: WriterStats) -> None:
    """Random writes on the shared pool of names until the deadline (and MIN_OPS_PER_WRITER of them); every
    answer must be one kube gives."""
    rng = random.Random(seed)

    def expect(response: httpx.Response, *codes: int) -> int:
        if response.status_code not in codes:
            stats.unexpected.append(describe(response))
        return response.status_code

    def patch(http: httpx.Client, url: str, body: Object) -> int:
        """A merge patch without resourceVersion: kube re-applies it on conflict, so 200 or 404."""
        response = http.patch(url, json=body, headers=MERGE)
        if response.status_code == 409:
            stats.patch_conflicts.append(describe(response))
            return 409
        return expect(response, 200, 404)

    def update(http: httpx.Client, url: str, change: Callable[[Object], None]) -> None:
        """GET, change, PUT with the read resourceVersion; on 409 Conflict read again and retry."""
        for _ in range(20):
            current = http.get(url)
            if expect(current, 200, 404) != 200:
                return
            obj = current.json()
            change(obj)
            if expect(http.put(url, json=obj), 200, 404, 409) != 409:
                return
            stats.conflicts += 1
        stats.unexpected.append(f"PUT {url}: still conflicting after 20 attempts")

    try:
        with server.client(timeout=10) as http:
            while (
                time.monotonic() < deadline or stats.ops < MIN_OPS_PER_WRITER
            ) and stats.ops < MAX_OPS_PER_WRITER:
                stats.ops += 1
                namespace = rng.choice(NAMESPACES)
                name = rng.choice(POOL)
                collection = f"{GROUP}/namespaces/{namespace}/crontabs"
                url = f"{collection}/{name}"
                team = rng.choice(["blue", "red"])
                replicas = rng.randint(0, 9)
                op = rng.choice(["create", "create", "update", "relabel", "delete", "stale"])
                if op == "create":
                    expect(http.post(collection, json=crontab(name, team, replicas)), 201, 409)
                elif op == "update":

                    def change(obj: Object, team: str = team, replicas: int = replicas) -> None:
                        obj["spec"]["replicas"] = replicas
                        obj["metadata"].setdefault("labels", {})["team"] = team

                    update(http, url, change)
                elif op == "relabel":
                    patch(http, url, {"metadata": {"labels": {"team": team}}})
                elif op == "delete":
                    expect(http.delete(url), 200, 404)
                else:  # a certain conflict: a PUT whose resourceVersion a PATCH made stale
                    current = http.get(url)
                    if expect(current, 200, 404) != 200:
                        continue
                    stale = current.json()
                    bumped = (stale["spec"]["replicas"] + 1) % 10  # a real change: a new revision
                    if patch(http, url, {"spec": {"replicas": bumped}}) != 200:
                        continue
                    stale["spec"]["image"] = f"busybox:{replicas}"
                    if expect(http.put(url, json=stale), 409, 404) == 409:
                        stats.conflicts += 1

                        def retry(obj: Object, image: str = stale["spec"]["image"]) -> None:
                            obj["spec"]["image"] = image

                        update(http, url, retry)
    except Exception as error:  # reported by the test, not as an unhandled thread exception
        stats.unexpected.append(f"{type(error).__name__}: {error}")


def listed(client: httpx.Client, flt: Filter, **params: str) -> tuple[str, dict[Key, Object]]:
    response = client.get(flt.path, params=flt.params(**params))
    assert response.status_code == 200, response.text
    body = response.json()
    return body["metadata"]["resourceVersion"], {key_of(item): item for item in body["items"]}


def replay(initial: dict[Key, Object], events: list[dict[str, Any]]) -> dict[Key, Object]:
    state = dict(initial)
    for index, event in enumerate(events):
        kind, obj = event["type"], event["object"]
        key = key_of(obj)
        where = f"event {index} {kind} {key} rv {obj['metadata'].get('resourceVersion')}"
        if kind == "ADDED":
            assert key not in state, f"{where}: ADDED for an object the watcher already holds"
            state[key] = obj
        elif kind in ("MODIFIED", "DELETED"):
            assert key in state, f"{where}: {kind} for an object the watcher does not hold"
            assert rv(obj) > rv(state[key]), f"{where}: not newer than the held object"
            if kind == "MODIFIED":
                state[key] = obj
            else:
                del state[key]
        else:
            pytest.fail(f"{where}: unexpected event type")
    return state


def signature(event: dict[str, Any]) -> tuple[str, str, str, str]:
    metadata = event["object"]["metadata"]
    return event["type"], metadata["namespace"], metadata["name"], metadata["resourceVersion"]


@dataclass
class Run:
    initial: dict[str, dict[Key, Object]]  # filter name -> state listed at the start
    watchers: dict[str, Watcher]
    final: dict[str, dict[Key, Object]]  # filter name -> state listed at the end
    everything: dict[Key, Object]  # the unfiltered final LIST
    stats: list[WriterStats]


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """The whole workload on each backend. On etcd the watch cache follows a watch without previous
    values and fills them in itself, which the DELETED and selector-leaving checks exercise."""
    extra: tuple[str, ...] = ()
    if request.param == "etcd":
        etcd: EtcdProcess = request.getfixturevalue("etcd")
        extra = ("--etcd-servers", etcd.url)
    process = ServerProcess(
        tmp_path_factory.mktemp("data"), free_port(), storage=request.param, extra_args=extra
    )
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def run(server: ServerProcess, client: httpx.Client) -> Run:
    for namespace in NAMESPACES:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        assert client.post("/api/v1/namespaces", json=body).status_code == 201
    for index, name in enumerate(POOL[:3]):  # some state before the watches start
        for namespace in NAMESPACES:
            created = client.post(
                f"{GROUP}/namespaces/{namespace}/crontabs",
                json=crontab(name, ["blue", "red"][index % 2]),
            )
            assert created.status_code == 201, created.text

    start, _ = listed(client, FILTERS[0])
    initial = {
        flt.name: listed(client, flt, resourceVersion=start, resourceVersionMatch="Exact")[1]
        for flt in FILTERS
    }
    watchers = {flt.name: Watcher(server, flt, start, sentinels_of(flt)) for flt in FILTERS}
    for watcher in watchers.values():
        watcher.start_thread()
    for watcher in watchers.values():
        assert watcher.connected.wait(10) and not watcher.error, watcher.error

    deadline = time.monotonic() + WRITE_SECONDS
    stats = [WriterStats() for _ in range(WRITERS)]
    threads = [
        threading.Thread(target=writer, args=(server, seed, deadline, stats[seed]), daemon=True)
        for seed in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WRITE_SECONDS + 60)
        assert not thread.is_alive(), "a writer did not stop"

    for namespace, team in SENTINELS:
        body = sentinel(namespace, team)
        response = client.post(f"{GROUP}/namespaces/{namespace}/crontabs", json=body)
        assert response.status_code == 201, response.text
    for watcher in watchers.values():
        assert watcher.join(20), f"{watcher.filter.name}: the sentinels never came"

    final = {flt.name: listed(client, flt)[1] for flt in FILTERS}
    return Run(initial, watchers, final, final[FILTERS[0].name], stats)


def test_writers_did_work_and_conflicted(run: Run) -> None:
    unexpected = [message for s in run.stats for message in s.unexpected]
    assert not unexpected, "\n".join(unexpected[:20])
    assert sum(s.ops for s in run.stats) >= WRITERS * MIN_OPS_PER_WRITER
    assert sum(s.conflicts for s in run.stats) >= 1
    assert len(run.watchers[FILTERS[0].name].events) >= 100


@pytest.mark.parametrize("flt", FILTERS, ids=lambda flt: flt.name)
def test_filtered_list_is_the_filter_applied_to_everything(run: Run, flt: Filter) -> None:
    expected = {key: obj for key, obj in run.everything.items() if flt.matches(obj)}
    assert run.final[flt.name] == expected
    initial_everything = run.initial[FILTERS[0].name]
    assert run.initial[flt.name] == {k: o for k, o in initial_everything.items() if flt.matches(o)}


@pytest.mark.parametrize("flt", FILTERS, ids=lambda flt: flt.name)
def test_stream_is_ordered_without_duplicates(run: Run, flt: Filter) -> None:
    watcher = run.watchers[flt.name]
    assert not watcher.error, watcher.error
    signatures = [signature(event) for event in watcher.events]
    assert len(set(signatures)) == len(signatures), "duplicated (type, name, resourceVersion)"
    versions = [int(s[3]) for s in signatures]
    assert all(a < b for a, b in itertools.pairwise(versions)), "resourceVersions not increasing"
    start = max((rv(obj) for obj in run.initial[flt.name].values()), default=0)
    assert not versions or versions[0] > start


@pytest.mark.parametrize("flt", FILTERS, ids=lambda flt: flt.name)
def test_added_and_modified_objects_match_the_filter(run: Run, flt: Filter) -> None:
    shown = [e["object"] for e in run.watchers[flt.name].events if e["type"] != "DELETED"]
    assert [key_of(obj) for obj in shown if not flt.matches(obj)] == []


@pytest.mark.parametrize("flt", FILTERS, ids=lambda flt: flt.name)
def test_replayed_state_equals_the_final_list(run: Run, flt: Filter) -> None:
    watcher = run.watchers[flt.name]
    state = replay(run.initial[flt.name], watcher.events)
    assert state.keys() == run.final[flt.name].keys()
    for key, obj in state.items():
        assert obj == run.final[flt.name][key], f"{key} differs"


def deleted_mismatches(run: Run, flt: Filter) -> tuple[int, list[str]]:
    """DELETED events whose object is not the last state the watcher held, at the event's resourceVersion.

    kube's cacheWatcher.convertToWatchEvent (k8s.io/apiserver pkg/storage/cacher/cache_watcher.go) answers
    both a deletion and an object leaving the selection with "a delete event with the previous object
    content, but with the event's resource version"; so the object of a DELETED event always matched the
    watcher's filter."""
    state = dict(run.initial[flt.name])
    deleted = 0
    mismatches = []
    for event in run.watchers[flt.name].events:
        obj = event["object"]
        if event["type"] == "DELETED":
            deleted += 1
            held = json.loads(json.dumps(state.pop(key_of(obj))))
            held["metadata"]["resourceVersion"] = obj["metadata"]["resourceVersion"]
            if obj != held or not flt.matches(obj):
                mismatches.append(
                    f"{key_of(obj)} at {rv(obj)}: labels {obj['metadata'].get('labels')}"
                )
        else:
            state[key_of(obj)] = obj
    return deleted, mismatches


@pytest.mark.parametrize("flt", [FILTERS[0], FILTERS[2]], ids=lambda flt: flt.name)
def test_deletion_is_deleted_with_the_last_state(run: Run, flt: Filter) -> None:
    """Without a label selector every DELETED is a deletion: it carries the last state, at the deletion's
    resourceVersion."""
    deleted, mismatches = deleted_mismatches(run, flt)
    assert deleted and not mismatches, mismatches[:5]


def test_leaving_the_selection_is_deleted_with_the_previous_content(run: Run) -> None:
    found = {flt.name: deleted_mismatches(run, flt) for flt in FILTERS if flt.label_selector}
    assert all(deleted for deleted, _ in found.values())
    assert {name: mismatches[:3] for name, (_, mismatches) in found.items() if mismatches} == {}


def test_resumed_watches_replay_exactly_the_tail(run: Run, server: ServerProcess) -> None:
    """For every watcher, a new watch from the resourceVersion of its middle event, with the same filter,
    gets exactly the events after it: nothing missing, nothing repeated, nothing more."""
    resumed: dict[str, Watcher] = {}
    for flt in FILTERS:
        events = run.watchers[flt.name].events
        middle = events[len(events) // 2]["object"]["metadata"]["resourceVersion"]
        # no sentinel to wait for: the stream ends at timeoutSeconds, so any extra event would show
        resumed[flt.name] = Watcher(server, flt, middle, frozenset(), timeout_seconds=1)
    for watcher in resumed.values():
        watcher.start_thread()
    for flt in FILTERS:
        watcher = resumed[flt.name]
        assert watcher.join(15) and not watcher.error, watcher.error
        events = run.watchers[flt.name].events
        assert watcher.events == events[len(events) // 2 + 1 :], flt.name


def test_concurrent_patches_without_resource_version_never_conflict(
    run: Run, client: httpx.Client, server: ServerProcess
) -> None:
    """Seen in the workload above, and reproduced on its own: threads merge-patching their own key of one
    ConfigMap (a kind no watcher above follows) must all get 200 and every last value must stick."""
    seen_in_workload = [message for s in run.stats for message in s.patch_conflicts]
    url = "/api/v1/namespaces/default/configmaps/patched"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "patched"}, "data": {}}
    assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
    answers: list[str] = []

    def patcher(index: int) -> None:
        with server.client(timeout=10) as http:
            for value in range(25):
                patch = {"data": {f"writer-{index}": str(value)}}
                response = http.patch(url, json=patch, headers=MERGE)
                if response.status_code != 200:
                    answers.append(describe(response))

    threads = [threading.Thread(target=patcher, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not seen_in_workload and not answers, (
        f"{len(seen_in_workload)} PATCHes of the workload and {len(answers)} of 200 concurrent PATCHes"
        " were not answered 200:\n" + "\n".join((answers + seen_in_workload)[:3])
    )
    assert client.get(url).json()["data"] == {f"writer-{index}": "24" for index in range(8)}
