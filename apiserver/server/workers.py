"""`apiforge serve --workers N`: N server processes on one port, supervised by the process started.

One Python process serves from one core (the GIL), so on etcd a busy server is bound by its own CPU per
request long before etcd is (docs/performance.md, E10 and E11). kube-apiserver uses every core of its machine;
apiforge does it with processes: each worker is a whole replica (its own etcd client, watch caches and
compactor), exactly like separate `apiforge serve` processes on one etcd, which the replica tests cover. The
kernel spreads incoming connections over the workers' listening sockets (SO_REUSEPORT). The supervisor writes
the kubeconfig once every worker is ready, forwards SIGTERM/SIGINT, and replaces a worker that dies.

Workers need etcd: SQLite (and memory) storage belongs to one process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

log = logging.getLogger("apiforge")

READY_TIMEOUT_SECONDS = 60.0
RESTART_DELAY_SECONDS = 1.0
Worker = Callable[[socket.socket, Callable[[], None]], None]
"""Serves on the listening socket until told to stop; calls its second argument once it is ready."""


def reuse_port_socket(host: str, port: int, *, listen: bool) -> socket.socket:
    """A TCP socket on (host, port) that other processes can bind too, the kernel balancing connections
    over those that listen. The supervisor's own socket is bound without listening: it reserves the
    port (and resolves port 0) across worker restarts without ever being handed a connection."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    if listen:
        sock.listen(2048)
        sock.setblocking(False)
    return sock


@dataclass
class Supervisor:
    """Starts and keeps ``count`` workers on (host, port); ``ready`` runs once all of them first are."""

    count: int
    host: str
    port: int
    worker: Worker
    ready: Callable[[int], None]
    pids: dict[int, int] = field(default_factory=dict)  # pid -> worker index
    stopping: bool = False

    def run(self) -> int:
        """The exit status: 0 after a requested stop in which every worker exited cleanly."""
        reservation = reuse_port_socket(self.host, self.port, listen=False)
        self.port = reservation.getsockname()[1]
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            readers = [self._start(index) for index in range(self.count)]
            if not self._await_ready(readers):
                self._stop(signal.SIGTERM, None)
                self._reap_all()
                return 1
            self.ready(self.port)
            return self._watch_over()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            reservation.close()

    def _start(self, index: int) -> int:
        """Fork worker ``index``; the read end of the pipe on which it reports ready."""
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the supervisor's code
            os.close(read_end)
            status = 1
            try:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)
                listener = reuse_port_socket(self.host, self.port, listen=True)
                self.worker(listener, lambda: _report_ready(write_end))
                status = 0
            except BaseException:  # whatever ends a worker must end it here, not in the supervisor
                log.exception("apiforge worker %d failed", index)
            finally:
                logging.shutdown()
                os._exit(status)
        os.close(write_end)
        self.pids[pid] = index
        return read_end

    def _await_ready(self, readers: list[int]) -> bool:
        """True once every worker has reported ready; False when one exits first or time runs out."""
        waiting, deadline = set(readers), time.monotonic() + READY_TIMEOUT_SECONDS
        while waiting and not self.stopping and time.monotonic() < deadline:
            readable, _, _ = select.select(list(waiting), [], [], 0.1)
            for reader in readable:
                if not os.read(reader, 1):  # closed without a word: the worker died starting
                    log.error("an apiforge worker exited before it was ready")
                    return False
                waiting.discard(reader)
                os.close(reader)
        for reader in waiting:
            os.close(reader)
        return not waiting

    def _watch_over(self) -> int:
        """Wait for workers to exit: all of them after a stop, or one that died, which is replaced."""
        status = 0
        while self.pids:
            try:
                pid, wait_status = os.wait()
            except ChildProcessError:
                break
            index = self.pids.pop(pid, None)
            code = os.waitstatus_to_exitcode(wait_status)
            if self.stopping:  # a worker still starting dies of the SIGTERM itself: as asked
                status = status or (1 if code not in (0, -signal.SIGTERM) else 0)
                continue
            if index is not None:
                log.error(
                    "apiforge worker %d (pid %d) exited with %d; restarting it", index, pid, code
                )
                time.sleep(RESTART_DELAY_SECONDS)
                if not self.stopping:
                    os.close(self._start(index))  # a replacement needs no readiness handshake
        return status

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True
        for pid in list(self.pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _reap_all(self) -> None:
        while self.pids:
            try:
                pid, _ = os.wait()
            except ChildProcessError:
                return
            self.pids.pop(pid, None)


def _report_ready(write_end: int) -> None:
    with contextlib.suppress(BrokenPipeError):  # a replacement: the supervisor is not listening
        os.write(write_end, b"r")
    os.close(write_end)
