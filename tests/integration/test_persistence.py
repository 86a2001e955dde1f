"""Data survives a restart and a crash: writes acknowledged to a client are never lost (SQLite, the default)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import httpx

from tests.serverproc import ServerProcess, free_port

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"k": name},
    }


def test_data_survives_restart(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, free_port())
    server.start()
    try:
        created = server.http("POST", CONFIGMAPS, json=configmap("kept")).json()
    finally:
        assert server.stop() == 0  # SIGTERM stops it cleanly
    server.start()
    try:
        again = server.http("GET", f"{CONFIGMAPS}/kept").json()
        assert again == created
        later = server.http("POST", CONFIGMAPS, json=configmap("after")).json()
        assert int(later["metadata"]["resourceVersion"]) > int(
            created["metadata"]["resourceVersion"]
        )
    finally:
        server.stop()


def test_kill_9_loses_no_acknowledged_write(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, free_port())
    server.start()
    acknowledged: list[str] = []
    stop = threading.Event()

    def write_stream(worker: int) -> None:
        with server.client(timeout=5) as client:
            index = 0
            while not stop.is_set():
                name = f"w{worker}-{index}"
                try:
                    response = client.post(CONFIGMAPS, json=configmap(name))
                except httpx.HTTPError:
                    return  # the server died mid-request: that write was never acknowledged
                if response.status_code == 201:
                    acknowledged.append(name)
                index += 1

    writers = [threading.Thread(target=write_stream, args=(n,)) for n in range(4)]
    for writer in writers:
        writer.start()
    while len(acknowledged) < 200:
        threading.Event().wait(0.01)
    server.stop(signal.SIGKILL)
    stop.set()
    for writer in writers:
        writer.join()
    server.start()
    try:
        stored = server.http("GET", CONFIGMAPS).json()["items"]
        names = {item["metadata"]["name"] for item in stored}
        missing = [name for name in acknowledged if name not in names]
        assert not missing, f"{len(missing)} acknowledged writes lost: {missing[:5]}"
    finally:
        server.stop()
