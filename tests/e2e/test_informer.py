"""Informers and listers against a real server (SQLite storage; a second server compacts its history every
0.3 s): the cache syncs from a list and follows the watch; listers read it by key, selector, namespace and
index; handlers hear every change exactly once across a server restart (the watch resumes from its last
resourceVersion) and across a compaction (410 Gone: a relist reconciles the cache, deletions missed arrive as
tombstones); resync re-delivers the cache. Each test ends with a marker object: once its ADD arrives,
everything written before it has arrived too, so the handlers' record is complete without waiting on a
clock."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from apiclient import AsyncConnection, Connection, load_kubeconfig
from apiclient.errors import Gone
from apiclient.informer import DeletedFinalStateUnknown, Informer
from generated.meta.v1.models import ObjectMeta
from generated.stable_example_com.v1.client import crontabs, crontabs_async
from generated.stable_example_com.v1.models import CronTab, CronTabSpec
from tests.serverproc import ServerProcess, free_port

NAMESPACE = "default"
TIMEOUT = 20.0


@pytest.fixture(scope="module")
def compacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("data"),
        free_port(),
        extra_args=("--etcd-compaction-interval", "0.3"),
    )
    process.start()
    yield process
    process.stop()


def crontab(name: str, suite: str, image: str = "nginx") -> CronTab:
    return CronTab(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels={"suite": suite, "tier": "web"}),
        spec=CronTabSpec(cron_spec="* * * * */5", image=image, replicas=1),
    )


def seed(server: ServerProcess, *objects: CronTab) -> None:
    """Create ``objects`` before an informer starts."""
    with Connection(load_kubeconfig(server.kubeconfig)) as sync:
        for obj in objects:
            crontabs(sync).create(obj)


class Recorder:
    """The handlers' calls, in order, as (event, name) pairs, and a way to await one."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.tombstones: list[DeletedFinalStateUnknown[CronTab]] = []
        self._changed = asyncio.Event()

    def attach(self, informer: Informer[CronTab]) -> None:
        informer.add_event_handler(
            on_add=lambda obj: self._record("add", obj),
            on_update=lambda old, new: self._record("update", new),
            on_delete=self._deleted,
        )

    def _deleted(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.tombstones.append(obj)
            self._record("tombstone", obj.object)
        else:
            self._record("delete", obj)

    def _record(self, event: str, obj: CronTab) -> None:
        assert obj.metadata is not None and obj.metadata.name
        self.calls.append((event, obj.metadata.name))
        self._changed.set()

    async def wait_for(self, call: tuple[str, str]) -> None:
        async def seen() -> None:
            while call not in self.calls:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(seen(), TIMEOUT)


async def informed(
    server: ServerProcess,
    suite: str,
    body: Callable[[Informer[CronTab], Recorder, Connection], Awaitable[None]],
    url: str | None = None,
    **options: Any,
) -> None:
    """Run ``body`` with a synced informer of the suite's crontabs, its recorder and a sync connection."""
    config = load_kubeconfig(server.kubeconfig)
    async with AsyncConnection(
        dataclasses.replace(config, server=url or config.server)
    ) as connection:
        informer = Informer(
            crontabs_async(connection), NAMESPACE, label_selector=f"suite={suite}", **options
        )
        recorder = Recorder()
        recorder.attach(informer)
        informer.start()
        try:
            assert await informer.wait_for_cache_sync(TIMEOUT)
            with Connection(config) as sync:
                await body(informer, recorder, sync)
        finally:
            await informer.stop()


def test_listers_read_the_cache_by_key_selector_namespace_and_index(
    server: ServerProcess,
) -> None:
    seed(server, crontab("lister-a", "lister"), crontab("lister-b", "lister", image="busybox"))

    async def body(informer: Informer[CronTab], recorder: Recorder, sync: Connection) -> None:
        assert sorted(recorder.calls) == [("add", "lister-a"), ("add", "lister-b")]
        lister = informer.lister()
        got = lister.get("lister-a", NAMESPACE)
        assert got is not None and got.spec is not None and got.spec.image == "nginx"
        assert lister.get("lister-a", "elsewhere") is None
        assert names(lister.list("tier=web")) == ["lister-a", "lister-b"]
        assert names(lister.list("tier in (web),suite!=lister")) == []
        assert names(lister.list(namespace=NAMESPACE)) == ["lister-a", "lister-b"]
        assert lister.list(namespace="kube-system") == []
        assert names(lister.by_index("image", "busybox")) == ["lister-b"]
        assert names(lister.by_index("labels", "suite=lister")) == ["lister-a", "lister-b"]
        assert names(lister.by_index("namespace", NAMESPACE)) == ["lister-a", "lister-b"]

        tabs = crontabs(sync)
        tabs.patch("lister-a", {"spec": {"image": "busybox"}}, NAMESPACE)
        tabs.delete("lister-b", NAMESPACE)
        tabs.create(crontab("lister-marker", "lister"))
        await recorder.wait_for(("add", "lister-marker"))
        assert recorder.calls[2:] == [
            ("update", "lister-a"),
            ("delete", "lister-b"),
            ("add", "lister-marker"),
        ]
        assert names(lister.by_index("image", "busybox")) == ["lister-a"]  # re-indexed on update
        assert names(lister.by_index("image", "nginx")) == ["lister-marker"]

        late = Recorder()  # a handler added after the sync hears of the cached objects first
        late.attach(informer)
        assert sorted(late.calls) == [("add", "lister-a"), ("add", "lister-marker")]

    asyncio.run(
        informed(
            server,
            "lister",
            body,
            indexers={"image": lambda tab: [tab.spec.image] if tab.spec and tab.spec.image else []},
        )
    )


def test_resync_redelivers_every_cached_object_as_an_update(server: ServerProcess) -> None:
    seed(server, crontab("resync-a", "resync"))

    async def body(informer: Informer[CronTab], recorder: Recorder, sync: Connection) -> None:
        await recorder.wait_for(("update", "resync-a"))
        assert recorder.calls[:2] == [("add", "resync-a"), ("update", "resync-a")]

    asyncio.run(informed(server, "resync", body, resync_period=0.2))


def test_the_watch_resumes_across_a_server_restart_without_loss_or_duplicates(
    server: ServerProcess,
) -> None:
    seed(server, crontab("restart-a", "restart"))

    async def body(informer: Informer[CronTab], recorder: Recorder, sync: Connection) -> None:
        before = informer.last_resource_version
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        with Connection(load_kubeconfig(server.kubeconfig)) as again:
            tabs = crontabs(again)
            tabs.create(crontab("restart-b", "restart"))
            tabs.patch("restart-a", {"spec": {"replicas": 2}}, NAMESPACE)
            tabs.delete("restart-a", NAMESPACE)
            tabs.create(crontab("restart-marker", "restart"))
        await recorder.wait_for(("add", "restart-marker"))
        assert recorder.calls == [
            ("add", "restart-a"),
            ("add", "restart-b"),
            ("update", "restart-a"),
            ("delete", "restart-a"),
            ("add", "restart-marker"),
        ]
        assert informer.relists == 1  # resumed from its resourceVersion, not relisted
        assert informer.last_resource_version != before

    asyncio.run(informed(server, "restart", body))


class Proxy:
    """A TCP relay to the server that the test can cut (every connection closed, none accepted) and restore:
    the informer's watch drops while writes go to the server directly."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.listen_port = free_port()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.listen_port}"

    async def open(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.listen_port)

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self._writers.update((writer, upstream_writer))

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                sink.close()
                self._writers.discard(sink)

        await asyncio.gather(pump(reader, upstream_writer), pump(upstream_reader, writer))


def test_a_compacted_resource_version_relists_with_tombstones_for_missed_deletes(
    compacting: ServerProcess,
) -> None:
    seed(compacting, crontab("compact-a", "compact"), crontab("compact-b", "compact"))

    async def scenario() -> None:
        proxy = Proxy(compacting.port)
        await proxy.open()

        async def body(informer: Informer[CronTab], recorder: Recorder, sync: Connection) -> None:
            assert sorted(recorder.calls) == [("add", "compact-a"), ("add", "compact-b")]
            await proxy.cut()
            seen = informer.last_resource_version
            tabs = crontabs(sync)
            tabs.delete("compact-a", NAMESPACE)
            tabs.patch("compact-b", {"spec": {"replicas": 3}}, NAMESPACE)
            tabs.create(crontab("compact-c", "compact"))
            await asyncio.to_thread(wait_until_compacted, sync, seen)
            await proxy.open()
            tabs.create(crontab("compact-marker", "compact"))
            await recorder.wait_for(("add", "compact-marker"))
            assert sorted(recorder.calls[2:-1]) == [
                ("add", "compact-c"),
                ("tombstone", "compact-a"),
                ("update", "compact-b"),
            ]
            assert recorder.calls[-1] == ("add", "compact-marker")
            [tombstone] = recorder.tombstones
            assert tombstone.key == f"{NAMESPACE}/compact-a"
            assert (
                tombstone.object.metadata is not None
                and tombstone.object.metadata.name == "compact-a"
            )
            assert informer.relists == 2
            assert names(informer.lister().list()) == ["compact-b", "compact-c", "compact-marker"]

        await informed(compacting, "compact", body, url=proxy.url)
        await proxy.cut()

    asyncio.run(scenario())


def wait_until_compacted(sync: Connection, resource_version: str | None) -> None:
    """Until a watch from ``resource_version`` is refused with 410 Gone (the next compaction)."""
    tabs = crontabs(sync)
    for tick in range(200):
        try:
            for _event in tabs.watch(
                NAMESPACE, resource_version=resource_version, timeout_seconds=1, bookmarks=False
            ):
                break
        except Gone:
            return
        tabs.patch("compact-b", {"metadata": {"annotations": {"tick": str(tick)}}}, NAMESPACE)
    raise AssertionError("history was not compacted")


def names(objects: list[CronTab]) -> list[str]:
    return sorted(obj.metadata.name for obj in objects if obj.metadata and obj.metadata.name)
