"""A watch client that stops reading is cut off without holding up the other watchers (kube's watch cache
terminates a watcher it cannot deliver to); one that reads slowly but keeps reading is not."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from apiserver.endpoints.watchwriter import STALL_SECONDS
from tests.serverproc import ServerProcess, free_port

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TCP_ESTABLISHED = 1  # tcp_info.tcpi_state (linux/tcp_states.h)
# 250 events of ~4 KiB: more than a watch connection's buffers take (WATCH_SEND_BUFFER)
WRITES = 250
PAYLOAD = "x" * 4096


@pytest.fixture
def server(tmp_path: Path) -> ServerProcess:
    process = ServerProcess(tmp_path, free_port())
    process.start()
    yield process
    process.stop()


def open_watch(server: ServerProcess, receive_buffer: int) -> socket.socket:
    """A raw watch connection whose kernel receive buffer is small, so unread events back up quickly."""
    sock = server.connect(receive_buffer=receive_buffer)
    request = f"GET {CONFIGMAPS}?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: apiforge\r\n\r\n"
    sock.sendall(request.encode())
    return sock


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes (or resets) the connection within ``within`` seconds, observed without
    reading from it: reading would make the watcher a slow reader rather than a stalled one."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] != TCP_ESTABLISHED:
            return True
        time.sleep(0.05)
    return False


def write_configmaps(client: httpx.Client) -> None:
    for index in range(WRITES):
        body = {"metadata": {"name": f"stall-{index}"}, "data": {"payload": PAYLOAD}}
        assert client.post(CONFIGMAPS, json=body).status_code == 201


def test_a_watcher_that_stops_reading_is_cut_off_and_the_others_get_everything(
    server: ServerProcess,
) -> None:
    received: list[str] = []

    def read_all() -> None:
        with (
            server.client(timeout=30) as reader,
            reader.stream("GET", f"{CONFIGMAPS}?watch=true&resourceVersion=0") as response,
        ):
            for line in response.iter_lines():
                if line:
                    received.append(json.loads(line)["object"]["metadata"]["name"])
                if len(received) == WRITES:
                    return

    with open_watch(server, receive_buffer=4096) as stalled:
        reading = threading.Thread(target=read_all)
        reading.start()
        time.sleep(0.5)  # both watches are established
        with server.client(timeout=30) as client:
            write_configmaps(client)
        reading.join(timeout=30)
        assert received == [f"stall-{index}" for index in range(WRITES)]
        # it has taken nothing since its buffers filled: cut off after STALL_SECONDS (two checks at most)
        assert closed_by_server(stalled, within=3 * STALL_SECONDS + 1), (
            "the stalled watcher is open"
        )


def test_a_slow_reader_that_keeps_reading_is_not_cut_off(server: ServerProcess) -> None:
    taken = b""
    with (
        open_watch(server, receive_buffer=4096) as slow,
        server.client(timeout=30) as client,
    ):
        writing = threading.Thread(target=write_configmaps, args=(client,))
        writing.start()
        slow.settimeout(10)
        deadline = time.monotonic() + 30
        # a little at a time, pausing for less than STALL_SECONDS between reads
        while taken.count(b'"ADDED"') < WRITES and time.monotonic() < deadline:
            chunk = slow.recv(8192)
            assert chunk, "the server closed a watcher that was still reading"
            taken += chunk
            time.sleep(STALL_SECONDS / 20)
        writing.join(timeout=30)
    assert taken.count(b'"ADDED"') == WRITES
