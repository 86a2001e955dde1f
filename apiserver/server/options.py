"""The options of `apiforge serve`, named as kube-apiserver's flags, as click options (the one CLI library of
every apiforge subcommand). Kept apart from the server itself so that the command line (and `--help`) loads
without uvicorn or the runtime."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

__all__ = ["ServeOptions", "serve_options"]


@dataclass(frozen=True)
class ServeOptions:
    """What `apiforge serve` was asked for, validated."""

    data_dir: Path
    bind_address: str
    port: int
    storage: str
    etcd_servers: list[str]
    etcd_prefix: str
    etcd_compaction_interval: float
    workers: int
    log_level: str


def serve_options(command: Callable[[ServeOptions], None]) -> Callable[..., None]:
    """Give ``command`` the serve options: click parses them, this checks how they combine (a usage error,
    exit 2, as a wrong flag) and hands ``command`` one ServeOptions."""

    @click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path(".apiforge-data"),
        show_default=True,
        help="Where the SQLite database and admin.kubeconfig live.",
    )
    @click.option(
        "--bind-address",
        default="127.0.0.1",
        show_default=True,
        help="The address to listen on (0.0.0.0 or :: for every interface).",
    )
    @click.option(
        "--port",
        "--secure-port",
        "port",
        type=click.IntRange(0, 65535),
        default=6443,
        show_default=True,
        help="The port to listen on.",
    )
    @click.option(
        "--storage",
        type=click.Choice(["sqlite", "memory", "etcd"]),
        default=None,
        help="sqlite (embedded, the default), memory (tests), or etcd (the default with --etcd-servers).",
    )
    @click.option("--etcd-servers", default="", help="Comma-separated etcd client URLs.")
    @click.option(
        "--etcd-prefix",
        default="/registry",
        show_default=True,
        help="The prefix of every etcd key.",
    )
    @click.option(
        "--etcd-compaction-interval",
        type=float,
        default=300.0,
        show_default=True,
        help="Seconds between compactions of the storage history (0 disables).",
    )
    @click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Server processes on the one port, each a replica with its own watch cache (etcd only):"
        " one Python process uses one core.",
    )
    @click.option("--log-level", default="warning", show_default=True, help="uvicorn's log level.")
    @functools.wraps(command)
    def parsed(
        data_dir: Path,
        bind_address: str,
        port: int,
        storage: str | None,
        etcd_servers: str,
        etcd_prefix: str,
        etcd_compaction_interval: float,
        workers: int,
        log_level: str,
    ) -> None:
        servers = [url.strip() for url in etcd_servers.split(",") if url.strip()]
        storage = storage or ("etcd" if servers else "sqlite")
        if storage == "etcd" and not servers:
            raise click.UsageError("--storage etcd needs --etcd-servers")
        if workers > 1 and storage != "etcd":
            raise click.UsageError(
                f"--workers {workers} needs --storage etcd: {storage} storage belongs to one process"
            )
        command(
            ServeOptions(
                data_dir,
                bind_address,
                port,
                storage,
                servers,
                etcd_prefix,
                etcd_compaction_interval,
                workers,
                log_level,
            )
        )

    return parsed
