"""What every bench shares: summary rows, medians, interleaved rounds, and child server processes.

The machines these run on are shared and noisy, so a bench never judges one absolute number: it runs
the variants it compares in the same run, rotating their order every round, and reports medians and
per-round ratios.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import uvloop

REPO = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")


@dataclass(frozen=True)
class Row:
    """One line of the summary table: a figure, the target it is held to (if any), and the verdict."""

    bench: str
    metric: str
    value: str
    target: str = ""
    met: bool | None = None

    @property
    def verdict(self) -> str:
        return {None: "", True: "met", False: "MISSED"}[self.met]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def spread(values: Sequence[float], fmt: str = ",.0f") -> str:
    """``median (min-max)`` of the samples."""
    return f"{median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def rotated(names: Sequence[T], round_number: int) -> list[T]:
    """The phases in a different order each round, so no variant always runs first or last."""
    shift = round_number % len(names) if names else 0
    return [*names[shift:], *names[:shift]]


async def interleaved(
    variants: dict[str, Callable[[], Awaitable[float]]], rounds: int
) -> dict[str, list[float]]:
    """One sample of every variant per round, after one warm-up of each, in a rotated order per round."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for variant in variants.values():  # warm-up
        await variant()
    for round_number in range(rounds):
        for name in rotated(list(variants), round_number):
            samples[name].append(await variants[name]())
    return samples


def run_uvloop(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a uvloop event loop of its own (the servers' loop)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def print_rows(rows: Sequence[Row]) -> None:
    widths = [max(len(getattr(row, key)) for row in rows) for key in ("bench", "metric", "value")]
    target_width = max(len(row.target) for row in rows)
    for row in rows:
        print(
            f"  {row.bench:<{widths[0]}}  {row.metric:<{widths[1]}}  {row.value:>{widths[2]}}"
            f"  {row.target:<{target_width}}  {row.verdict}".rstrip()
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """User + system CPU time so far of a process (all its threads) and of its children, live or
    reaped, from /proc: a server started with ``--workers`` is a supervisor over worker processes."""
    children = _children(pid)  # first: a child reaped after this is in the parent's reaped time
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = sum(int(fields[index]) for index in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    return ticks / CLOCK_TICKS + sum(_child_cpu_seconds(child) for child in children)


def thread_cpu_seconds(pid: int) -> float:
    """CPU time so far of a process's live threads, in nanoseconds' precision (/proc/PID/task/*/schedstat),
    where ``cpu_seconds`` counts clock ticks (10 ms): for differences of a few µs per request. Children and
    exited threads are not counted."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return total / 1e9


def _children(pid: int) -> list[int]:
    try:
        return [
            int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        ]
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN, or the process is gone
        return []


def _child_cpu_seconds(pid: int) -> float:
    try:
        return cpu_seconds(pid)
    except FileNotFoundError:  # exited meanwhile: its time is in its parent's reaped children
        return 0.0


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent not idle since boot (from /proc/stat), for telling other load apart."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ticks = [int(x) for x in fields]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks[:8]) - idle) / CLOCK_TICKS


def maps_module(pid: int, name: str) -> bool:
    """Whether a shared library whose path contains ``name`` is loaded in the process."""
    try:
        return name in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def http_status(port: int, path: str, timeout: float = 1.0) -> int:
    """Status of one plain GET over a fresh connection (0 if nothing answers)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n".encode()
            )
            head = sock.recv(64)
    except OSError:
        return 0
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def accepts(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port (a TLS server's first sign of life)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


class ChildServer:
    """A server in a child process on 127.0.0.1, its output kept in a log file for when it fails.
    ``python`` and ``cwd`` run another checkout's server (bench/checkout.py); the default is this one."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        port: int,
        log_path: Path,
        python: Path | None = None,
        cwd: Path = REPO,
    ) -> None:
        self.name = name
        self.argv = argv
        self.port = port
        self.log_path = log_path
        self.python = str(python) if python else sys.executable
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None
        self.ready_seconds = 0.0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(
        self, ready_file: Path | None = None, timeout: float = 120.0, probe: bool = True
    ) -> float:
        """Start, wait until ``ready_file`` exists (if given) and /readyz answers 200 over plain HTTP
        (``probe``; else until the port accepts connections); seconds taken."""
        with self.log_path.open("ab") as log:
            started = time.perf_counter()
            self.process = subprocess.Popen(
                [self.python, *self.argv], cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT
            )
        while (elapsed := time.perf_counter() - started) < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.process.returncode}: {self.tail()}"
                )
            if (ready_file is None or ready_file.exists()) and (
                http_status(self.port, "/readyz") == 200 if probe else accepts(self.port)
            ):
                self.ready_seconds = elapsed
                return elapsed
            time.sleep(0.005)
        self.stop()
        raise RuntimeError(f"{self.name} was not ready within {timeout}s: {self.tail()}")

    def tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
