"""``python -m oracle build|start|record|diverge``: build the binaries, run the pair for a person to talk to,
record the corpus's goldens from it, and list apiforge's differences from them as divergence entries."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from pathlib import Path

import click

from oracle.binaries import BUILD_SCRIPT, KUBE_VERSION
from oracle.cluster import KubeCluster, running_cluster
from oracle.corpus import DIVERGENCES, GOLDEN, SCENARIOS, fresh_apiforge, fresh_oracle
from oracle.execute import run_scenario
from oracle.golden import (
    comparison,
    differences,
    dump,
    read_divergences,
    read_golden,
    write_golden,
)
from oracle.scenario import Request, Scenario, load_scenarios


@click.group()
def main() -> None:
    """The kube-apiserver oracle."""


@main.command()
def build() -> None:
    """Build kube-apiserver and kube-controller-manager (oracle/build.sh; cached after the first time)."""
    sys.exit(subprocess.call(["bash", str(BUILD_SCRIPT)]))


@main.command()
@click.option(
    "--data-dir", type=click.Path(path_type=Path), default=None, help="Kept (default: a temp dir)."
)
def start(data_dir: Path | None) -> None:
    """Start etcd, kube-apiserver and kube-controller-manager; stop them on Ctrl-C or SIGTERM."""
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with running_cluster(data_dir) as cluster:
        _announce(cluster)
        with contextlib.suppress(KeyboardInterrupt):
            stopped.wait()


def _announce(cluster: KubeCluster) -> None:
    click.echo(f"oracle: kube-apiserver {KUBE_VERSION} at {cluster.url}")
    click.echo(f"oracle: export KUBECONFIG={cluster.kubeconfig}")
    click.echo(f"oracle: logs in {cluster.data_dir}/*.log; Ctrl-C stops")


def _selected(names: tuple[str, ...]) -> list[Scenario]:
    scenarios = load_scenarios(SCENARIOS)
    unknown = set(names) - {scenario.name for scenario in scenarios}
    if unknown:
        raise click.UsageError(f"no such scenario: {', '.join(sorted(unknown))}")
    return [scenario for scenario in scenarios if not names or scenario.name in names]


@main.command()
@click.argument("names", nargs=-1)
def record(names: tuple[str, ...]) -> None:
    """Run the scenarios (all, or NAMES) against fresh oracles and write their goldens."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    requests = invocations = 0
    for scenario in _selected(names):
        with fresh_oracle() as oracle:
            outcomes = run_scenario(oracle, scenario)
        write_golden(GOLDEN, scenario.name, KUBE_VERSION, outcomes)
        http = sum(isinstance(step.action, Request) for step in scenario.steps)
        requests, invocations = requests + http, invocations + len(scenario.steps) - http
        click.echo(f"recorded {scenario.name}: {len(scenario.steps)} steps")
    click.echo(f"recorded {requests} HTTP requests and {invocations} kubectl invocations")


@main.command()
@click.argument("names", nargs=-1)
def diverge(names: tuple[str, ...]) -> None:
    """Replay the goldens against apiforge; print each unlisted difference as a divergence entry to edit."""
    listed = read_divergences(DIVERGENCES) if DIVERGENCES.exists() else {}
    entries = []
    for scenario in _selected(names):
        golden = read_golden(GOLDEN, scenario.name)
        with fresh_apiforge() as server:
            actual = run_scenario(server, scenario)
        for step, expected in golden.items():
            same = comparison(step in scenario.unordered)
            if not same(actual.get(step), expected) and (scenario.name, step) not in listed:
                click.echo("\n".join(differences(expected, actual.get(step))), err=True)
                entry = {"scenario": scenario.name, "step": step, "state": "open", "why": "TODO"}
                entries.append({**entry, "oracle": expected, "apiforge": actual.get(step)})
    if entries:
        click.echo(dump(entries))


if __name__ == "__main__":
    main()
