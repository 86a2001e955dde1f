"""`apiforge serve` options (click, kube-apiserver's flag names): what `--help` lists, the defaults, how they
combine, and usage errors (exit 2, before any generated package is imported or a port is bound)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from apiforge.cli import main
from apiserver.server.options import ServeOptions
from builtin.core.eventttl import EventTTL
from builtin.core.serviceranges import DEFAULT_SERVICE_RANGES, ServiceRanges, parse_service_ranges
from builtin.kindfacts import KIND_FACTS

FLAGS = (
    "--data-dir",
    "--bind-address",
    "--port",
    "--secure-port",
    "--storage",
    "--etcd-servers",
    "--etcd-prefix",
    "--etcd-compaction-interval",
    "--workers",
    "--log-level",
    "--tls-cert-file",
    "--tls-private-key-file",
    "--client-ca-file",
    "--tls-min-version",
    "--tls-cipher-suites",
    "--tls-san",
    "--insecure-serving",
    "--service-cluster-ip-range",
    "--service-node-port-range",
)


def _serve(*arguments: str) -> Result:
    return CliRunner().invoke(main, ["serve", *arguments])


def test_help_lists_every_flag() -> None:
    result = _serve("--help")
    assert result.exit_code == 0
    for flag in FLAGS:
        assert flag in result.output


def test_defaults(served: list[ServeOptions]) -> None:
    assert _serve().exit_code == 0
    assert served == [
        ServeOptions(
            data_dir=Path(".apiforge-data"),
            bind_address="127.0.0.1",
            port=6443,
            storage="sqlite",
            etcd_servers=[],
            etcd_prefix="/registry",
            etcd_compaction_interval=300.0,
            workers=1,
            log_level="warning",
            kind_options={
                ServiceRanges: DEFAULT_SERVICE_RANGES,
                EventTTL: EventTTL(3600.0),
                **KIND_FACTS,
            },
        )
    ]


def test_the_kinds_own_flags_reach_the_server_as_kind_options(served: list[ServeOptions]) -> None:
    """The Service ranges and the events' TTL are core's flags (builtin/), handed through the runtime's
    generic hook, beside what the kinds tell the runtime (builtin/kindfacts.py), which no flag changes."""
    arguments = (
        "--service-cluster-ip-range",
        "10.96.0.0/12",
        "--service-node-port-range",
        "40000-40100",
    )
    assert _serve(*arguments, "--event-ttl", "2m30s").exit_code == 0
    (options,) = served
    ranges = parse_service_ranges("10.96.0.0/12", "40000-40100")
    assert options.kind_options == {
        ServiceRanges: ranges,
        EventTTL: EventTTL(150.0),
        **KIND_FACTS,
    }
    assert ranges.node_ports == range(40000, 40101)


def test_etcd_servers_select_etcd(served: list[ServeOptions]) -> None:
    arguments = [
        "--secure-port=7443",
        "--etcd-servers",
        " http://a:2379, ,http://b:2379",
        "--workers",
        "3",
    ]
    result = _serve(*arguments, "--etcd-prefix", "/x", "--etcd-compaction-interval", "0")
    assert result.exit_code == 0, result.output
    (options,) = served
    assert (options.port, options.storage, options.workers) == (7443, "etcd", 3)
    assert options.etcd_servers == ["http://a:2379", "http://b:2379"]
    assert (options.etcd_prefix, options.etcd_compaction_interval) == ("/x", 0.0)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--storage", "etcd"], "--storage etcd needs --etcd-servers"),
        (
            ["--workers", "2"],
            "--workers 2 needs --storage etcd: sqlite storage belongs to one process",
        ),
        (["--workers", "0"], "Invalid value for '--workers': 0 is not in the range x>=1"),
        (
            ["--port", "70000"],
            "Invalid value for '--port' / '--secure-port': 70000 is not in the range",
        ),
        (["--storage", "disk"], "Invalid value for '--storage': 'disk' is not one of"),
        (["--insecure-port", "8080"], "No such option"),
        (["--event-ttl", "0s"], "--event-ttl must be positive"),
        (
            ["--service-node-port-range", "40000-30000"],
            '--service-node-port-range: invalid port range: "40000-30000"',
        ),
    ],
)
def test_usage_errors(served: list[ServeOptions], arguments: list[str], message: str) -> None:
    result = _serve(*arguments)
    assert result.exit_code == 2
    assert message in result.output
    assert served == []
