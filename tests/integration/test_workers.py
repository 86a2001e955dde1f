"""`apiforge serve --workers N` on a real etcd: N worker processes behind one port, each a replica; the kernel
spreads connections over them, a worker that dies is replaced without the port going dark, and SIGTERM stops
them all cleanly. Workers need etcd: SQLite belongs to one process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.etcdproc import EtcdProcess
from tests.serverproc import REPO, ServerProcess, free_port
from tests.shipped import CRONTABS, crontab

WORKERS = 2
CONNECTIONS = 16  # the chance that all of them hash to one of two workers is 2 / 2**16


@pytest.fixture
def server(tmp_path: Path, etcd: EtcdProcess) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path / "server",
        free_port(),
        storage="etcd",
        extra_args=("--etcd-servers", etcd.url, "--workers", str(WORKERS)),
    )
    process.data_dir.mkdir()
    process.start()
    yield process
    process.stop()


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def established_sockets(pid: int, port: int) -> int:
    """How many TCP connections to ``port`` process ``pid`` holds open (from /proc, by socket inode)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].rpartition(":")[2], 16)
        if local_port == port and fields[3] == "01" and fields[9] in inodes:  # 01: ESTABLISHED
            count += 1
    return count


def test_workers_share_the_port_and_every_one_serves(server: ServerProcess) -> None:
    assert server.process is not None
    workers = children(server.process.pid)
    assert len(workers) == WORKERS
    clients = [server.client(timeout=10) for _ in range(CONNECTIONS)]
    try:
        created = clients[0].post(CRONTABS, json=crontab("everywhere"))
        assert created.status_code == 201
        for client in clients:  # every connection, whichever worker holds it, reads the same object
            response = client.get(f"{CRONTABS}/everywhere")
            assert response.status_code == 200
            assert response.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
        held = {pid: established_sockets(pid, server.port) for pid in workers}
        assert sum(held.values()) == CONNECTIONS
        assert all(held.values()), held
    finally:
        for client in clients:
            client.close()


def test_a_killed_worker_is_replaced_and_the_port_keeps_answering(server: ServerProcess) -> None:
    assert server.process is not None
    victim, survivor = children(server.process.pid)
    os.kill(victim, signal.SIGKILL)
    # a connection the kernel queued on the victim's socket in the instant it died is reset: that is the
    # kernel's doing (SO_REUSEPORT), not the supervisor's; from the victim's reaping on, all must answer
    deadline = time.monotonic() + 5
    while victim in children(server.process.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        # a fresh connection each time: the kernel hands it to a worker that is listening
        response = server.http("GET", CRONTABS, timeout=5)
        assert response.status_code == 200
        replaced = children(server.process.pid)
        if len(replaced) == WORKERS and victim not in replaced:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"no replacement for worker {victim}: {children(server.process.pid)}")
    assert survivor in replaced
    workers = replaced
    assert server.stop() == 0
    for pid in workers:
        assert (
            not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        )


def test_a_port_already_served_is_refused(
    tmp_path: Path, server: ServerProcess, etcd: EtcdProcess
) -> None:
    """SO_REUSEPORT would let a second server join the port and take half its connections; it must fail
    as a single process does when the address is in use."""
    command = [sys.executable, "-m", "apiforge", "serve", "--data-dir", str(tmp_path / "second")]
    command += ["--port", str(server.port), "--etcd-servers", etcd.url, "--etcd-prefix", "/second"]
    command += ["--workers", "2"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert (
        f"Error: failed to listen on 127.0.0.1:{server.port}: bind: address already in use"
        in result.stderr
    )
    for _ in range(CONNECTIONS):  # every fresh connection still reaches the first server
        assert server.http("GET", "/api/v1/namespaces/default", timeout=5).status_code == 200


def test_workers_do_not_outlive_their_supervisor(server: ServerProcess) -> None:
    """Even a SIGKILLed supervisor (the OOM killer) takes its workers with it: none serves unsupervised."""
    assert server.process is not None
    workers = children(server.process.pid)
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    with pytest.raises(httpx.ConnectError):
        server.http("GET", "/readyz", timeout=5)


@pytest.mark.parametrize("storage", ["sqlite", "memory"])
def test_workers_need_etcd(tmp_path: Path, storage: str) -> None:
    command = [sys.executable, "-m", "apiforge", "serve", "--data-dir", str(tmp_path)]
    command += ["--port", str(free_port()), "--storage", storage, "--workers", "2"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert f"--workers 2 needs --storage etcd: {storage} storage belongs to one process" in (
        result.stderr
    )
    assert not (tmp_path / "admin.kubeconfig").exists()
