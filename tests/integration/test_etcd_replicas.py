"""Several apiforge servers over one real etcd (issue: the distributed engine): a write through one replica is
seen by a watch on the other, conflicting writes through both yield exactly one success, killing a replica or
etcd itself mid-stream loses no acknowledged write, and the CRUD behaviour is the embedded default's."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import httpx
import pytest

from tests.etcdproc import EtcdProcess
from tests.serverproc import ServerProcess, free_port
from tests.shipped import CRONTABS, crontab

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def replica(tmp_path: Path, etcd: EtcdProcess, name: str) -> ServerProcess:
    server = ServerProcess(
        tmp_path / name, free_port(), storage="etcd", extra_args=("--etcd-servers", etcd.url)
    )
    server.data_dir.mkdir(parents=True, exist_ok=True)
    server.start()
    return server


def test_write_through_one_replica_is_seen_by_a_watch_on_the_other(
    tmp_path: Path, etcd: EtcdProcess
) -> None:
    first, second = replica(tmp_path, etcd, "a"), replica(tmp_path, etcd, "b")
    try:
        with first.client(timeout=10) as one, second.client(timeout=10) as two:
            start = two.get(CRONTABS).json()["metadata"]["resourceVersion"]
            created = one.post(CRONTABS, json=crontab("replicated"))
            assert created.status_code == 201
            url = f"{CRONTABS}?watch=true&resourceVersion={start}&timeoutSeconds=5"
            with two.stream("GET", url) as response:
                for line in response.iter_lines():
                    event = json.loads(line)
                    if event["object"]["metadata"]["name"] == "replicated":
                        break
            assert event["type"] == "ADDED"
            assert event["object"]["metadata"]["uid"] == created.json()["metadata"]["uid"]
            assert two.get(f"{CRONTABS}/replicated").json() == created.json()
    finally:
        first.stop()
        second.stop()


def test_conflicting_writes_through_both_replicas_yield_exactly_one_success(
    tmp_path: Path, etcd: EtcdProcess
) -> None:
    first, second = replica(tmp_path, etcd, "a"), replica(tmp_path, etcd, "b")
    try:
        current = first.http("POST", CRONTABS, json=crontab("contested")).json()
        outcomes = []
        for server, image in ((first, "one"), (second, "two")):
            body = dict(current, spec={**current["spec"], "image": image})
            outcomes.append(server.http("PUT", f"{CRONTABS}/contested", json=body).status_code)
        assert sorted(outcomes) == [200, 409]
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize("victim", ["replica", "etcd"])
def test_kill_9_loses_no_acknowledged_write(tmp_path: Path, etcd: EtcdProcess, victim: str) -> None:
    server = replica(tmp_path, etcd, "a")
    acknowledged: list[str] = []
    stop = threading.Event()

    def write_stream(worker: int) -> None:
        with server.client(timeout=5) as client:
            index = 0
            while not stop.is_set():
                name = f"{victim}-{worker}-{index}"
                try:
                    response = client.post(
                        CONFIGMAPS,
                        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
                    )
                except httpx.HTTPError:
                    if victim == "replica":
                        return
                    continue
                if response.status_code == 201:
                    acknowledged.append(name)
                index += 1

    writers = [threading.Thread(target=write_stream, args=(n,)) for n in range(4)]
    for writer in writers:
        writer.start()
    while len(acknowledged) < 100:
        threading.Event().wait(0.01)
    if victim == "replica":
        server.stop(signal.SIGKILL)
    else:
        etcd.kill()
        etcd.restart()
        while len(acknowledged) < 200:  # the replica recovers and goes on acknowledging
            threading.Event().wait(0.01)
    stop.set()
    for writer in writers:
        writer.join()
    survivor = server if victim == "etcd" else replica(tmp_path, etcd, "b")
    try:
        stored = survivor.http("GET", CONFIGMAPS).json()["items"]
        names = {item["metadata"]["name"] for item in stored}
        missing = [name for name in acknowledged if name not in names]
        assert not missing, f"{len(missing)} acknowledged writes lost: {missing[:5]}"
    finally:
        survivor.stop()
        server.stop()


def test_crud_semantics_on_etcd(tmp_path: Path, etcd: EtcdProcess) -> None:
    server = replica(tmp_path, etcd, "crud")
    try:
        with server.client(timeout=10) as http:
            created = http.post(CRONTABS, json=crontab("on-etcd")).json()
            assert http.post(CRONTABS, json=crontab("on-etcd")).status_code == 409
            stale = dict(created, spec={**created["spec"], "replicas": 3})
            assert (
                http.put(
                    f"{CRONTABS}/on-etcd",
                    json=dict(created, spec={**created["spec"], "replicas": 2}),
                ).status_code
                == 200
            )
            assert http.put(f"{CRONTABS}/on-etcd", json=stale).json()["reason"] == "Conflict"
            assert http.get(f"{CRONTABS}/on-etcd").json()["spec"]["replicas"] == 2
            assert http.delete(f"{CRONTABS}/on-etcd").status_code == 200
            assert http.get(f"{CRONTABS}/on-etcd").status_code == 404
    finally:
        server.stop()
