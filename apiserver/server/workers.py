"""`apiforge serve --workers N`: N server processes on one port, supervised by the process started.

One Python process serves from one core (the GIL), so on etcd a busy server is bound by its own CPU per
request long before etcd is (docs/performance.md, "What is missed"). kube-apiserver uses every core of its machine;
apiforge does it with processes: each worker is a whole replica (its own etcd client, watch caches and
compactor), exactly like separate `apiforge serve` processes on one etcd, which the replica tests cover. The
kernel spreads incoming connections over the workers' listening sockets (SO_REUSEPORT). The supervisor writes
the kubeconfig once every worker is ready, forwards SIGTERM/SIGINT, and replaces a worker that dies (each after
its own back-off, giving up on one that keeps dying at once). Workers die with their supervisor, even by
SIGKILL.

Workers need etcd: SQLite (and memory) storage belongs to one process.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import signal
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import NoReturn

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
READY_TIMEOUT_SECONDS = 60.0
FIRST_RESTART_DELAY_SECONDS = 1.0
LONGEST_RESTART_DELAY_SECONDS = 30.0
QUICK_EXIT_SECONDS = 30.0
"""A worker that dies sooner than this after its start failed to start: the next restart waits longer."""
QUICK_EXITS_TOLERATED = 5
"""Quick exits in a row of one worker after which the supervisor stops everything (exit 1)."""
POLL_SECONDS = 0.05
_PR_SET_PDEATHSIG = 1  # linux/prctl.h

Worker = Callable[[socket.socket, Callable[[], None]], None]
"""Serves on the listening socket until told to stop; calls its second argument once it is ready."""


def claim_port(host: str, port: int) -> socket.socket:
    """The supervisor's socket on (host, port) (port 0: one the kernel picks), bound but never listening:
    it holds the port across worker restarts without being handed a connection.

    It is refused when something holds the port, as a single process is: SO_REUSEPORT alone would let
    this user's sockets join a port already served (by another server, or by workers left over) and
    split its connections. Hence the probe first; and no SO_REUSEADDR on the reservation, which would
    let any SO_REUSEADDR socket (uvicorn's, another probe) take the port while all workers are down."""
    with socket.socket(address_family(host), socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))  # OSError(EADDRINUSE) when taken
        port = probe.getsockname()[1]
    reservation = socket.socket(address_family(host), socket.SOCK_STREAM)
    try:
        reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        reservation.bind((host, port))
    except OSError:
        reservation.close()
        raise
    return reservation


def listening_socket(host: str, port: int) -> socket.socket:
    """A worker's socket on the supervisor's port: the kernel balances connections over those listening."""
    sock = socket.socket(address_family(host), socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def address_family(host: str) -> socket.AddressFamily:
    """IPv6 for an address literal with colons; IPv4 for anything else, host names included."""
    return socket.AF_INET6 if ":" in host else socket.AF_INET


@dataclass
class Supervisor:
    """Starts and keeps ``count`` workers on the port of ``reservation`` (from :func:`claim_port`; closed
    when the supervisor ends); ``ready`` gets the port once all of them first are ready."""

    count: int
    reservation: socket.socket
    worker: Worker
    ready: Callable[[int], None]
    pids: dict[int, int] = field(default_factory=dict)  # pid -> worker index
    started: dict[int, float] = field(default_factory=dict)  # pid -> when it was forked
    quick_exits: dict[int, int] = field(default_factory=dict)  # index -> quick exits in a row
    restarts: dict[int, float] = field(default_factory=dict)  # index -> when to start it again
    stopping: bool = False

    def run(self) -> int:
        """The exit status: 0 after a requested stop in which every worker exited cleanly."""
        previous = {sig: signal.signal(sig, self._stop) for sig in STOP_SIGNALS}
        try:
            readers = [self._start(index) for index in range(self.count)]
            failed = not self._await_ready([r for r in readers if r is not None])
            with _signals_held():  # a stop from here on must not announce a server going away
                interrupted = self.stopping
                if not failed and not interrupted:
                    self.ready(self.reservation.getsockname()[1])
            if failed or interrupted:
                self._stop(signal.SIGTERM, None)
            return self._watch_over(failed and not interrupted)
        except BaseException:  # e.g. the kubeconfig cannot be written: no worker may outlive this
            self._stop(signal.SIGTERM, None)
            self._watch_over()
            raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.reservation.close()

    def _start(self, index: int) -> int | None:
        """Fork worker ``index``; the read end of the pipe on which it reports ready (None: stopping).

        The stop signals are held from the check of ``stopping`` until the worker is in ``pids``, so a
        SIGTERM in between still reaches it; the worker releases them once its own handlers are set."""
        read_end, write_end = os.pipe()
        with _signals_held() as mask:
            if self.stopping:
                os.close(write_end)
                os.close(read_end)
                return None
            supervisor = os.getpid()
            pid = os.fork()
            if pid == 0:
                self._become_worker(index, supervisor, read_end, write_end, mask)
            self.pids[pid] = index
            self.started[pid] = time.monotonic()
        os.close(write_end)
        return read_end

    def _become_worker(
        self, index: int, supervisor: int, read_end: int, write_end: int, mask: set[int]
    ) -> NoReturn:
        """The forked child: serve, then leave without ever returning into the supervisor's code."""
        status = 1
        try:
            os.close(read_end)
            # the supervisor's SIGTERM ends a worker still starting; a terminal's Ctrl-C, which reaches
            # the whole process group, is left to the supervisor (uvicorn handles both once serving)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _die_with(supervisor)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            host, port = self.reservation.getsockname()[:2]
            self.reservation.close()
            self.worker(listening_socket(host, port), lambda: _report_ready(write_end))
            status = 0
        except BaseException:  # whatever ends a worker must end it here, not in the supervisor
            log.exception("apiforge worker %d failed", index)
        finally:
            logging.shutdown()
            os._exit(status)

    def _await_ready(self, readers: list[int]) -> bool:
        """True once every worker has reported ready; False when one exits first, time runs out or a
        stop is asked for."""
        waiting, deadline = set(readers), time.monotonic() + READY_TIMEOUT_SECONDS
        died = False
        while waiting and not died and not self.stopping and time.monotonic() < deadline:
            readable, _, _ = select.select(list(waiting), [], [], 0.1)
            for reader in readable:
                if not os.read(reader, 1):  # closed without a word: the worker died starting
                    died = True
                waiting.discard(reader)
                os.close(reader)
        for reader in waiting:
            os.close(reader)
        if not self.stopping:
            if died:
                log.error("an apiforge worker exited before it was ready")
            elif waiting:
                log.error("apiforge workers were not ready within %.0fs", READY_TIMEOUT_SECONDS)
        return not waiting and not died

    def _watch_over(self, failed: bool = False) -> int:
        """Collect workers as they exit, replacing those that die unasked, each after its own back-off
        (one worker's wait never holds up another's replacement), until every worker is gone after a
        stop. Polls every POLL_SECONDS, which also dates each exit to within that."""
        status = 1 if failed else 0
        while self.pids or (self.restarts and not self.stopping):
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG) if self.pids else (0, 0)
            except ChildProcessError:  # none left after all
                break
            if pid == 0:
                self._restart_due()
                time.sleep(POLL_SECONDS)
                continue
            index = self.pids.pop(pid, None)
            lived = time.monotonic() - self.started.pop(pid, 0.0)
            code = os.waitstatus_to_exitcode(wait_status)
            if index is None:
                continue
            if self.stopping:  # a worker still starting dies of the stop signal itself: as asked
                clean = code == 0 or -code in STOP_SIGNALS
                status = status or (0 if clean else 1)
                continue
            quick = self.quick_exits.get(index, 0) + 1 if lived < QUICK_EXIT_SECONDS else 0
            self.quick_exits[index] = quick
            if quick > QUICK_EXITS_TOLERATED:
                log.error("apiforge worker %d keeps exiting at once (%d); stopping", index, code)
                status = 1
                self._stop(signal.SIGTERM, None)
                continue
            delay = min(LONGEST_RESTART_DELAY_SECONDS, FIRST_RESTART_DELAY_SECONDS * 2**quick)
            log.error(
                "apiforge worker %d (pid %d) exited with %d; restarting it in %.0fs",
                index,
                pid,
                code,
                delay,
            )
            self.restarts[index] = time.monotonic() + delay
        return status

    def _restart_due(self) -> None:
        if self.stopping:
            self.restarts.clear()
            return
        now = time.monotonic()
        for index, when in list(self.restarts.items()):
            if when <= now:
                del self.restarts[index]
                reader = self._start(index)
                if reader is not None:
                    os.close(reader)  # a replacement needs no readiness handshake

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True
        for pid in list(self.pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


@contextlib.contextmanager
def _signals_held() -> Iterator[set[int]]:
    """The stop signals blocked for the block (their handler runs right after it); yields the mask from
    before, which a worker forked inside restores itself."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield mask
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _die_with(supervisor: int) -> None:
    """Have the kernel SIGTERM this worker when the supervisor dies, whatever kills it (Linux's
    PR_SET_PDEATHSIG): a worker must never serve on unsupervised. Leaves at once if it is already gone."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != supervisor:
        os._exit(1)


def _report_ready(write_end: int) -> None:
    with contextlib.suppress(BrokenPipeError):  # a replacement: the supervisor is not listening
        os.write(write_end, b"r")
    os.close(write_end)
