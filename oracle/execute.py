"""Run a scenario's steps against a server, apiforge or the oracle alike, and return each step's outcome
normalized (``oracle/normalize.py``), ready to be compared with or recorded as a golden."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

import httpx

from oracle.normalize import normalize_body, normalize_headers, normalize_terminal, normalize_text
from oracle.scenario import KubectlRun, Request, Scenario, Step
from tests.kubectl import Kubectl, kubectl_binary

REQUEST_TIMEOUT = 60.0
UNTIL_TIMEOUT = 60.0
UNTIL_INTERVAL = 0.2


class Target(Protocol):
    """What the runner needs of a started server: tests/serverproc.ServerProcess and KubeCluster have it."""

    @property
    def url(self) -> str: ...

    @property
    def kubeconfig(self) -> Path: ...

    def client(self, **options: Any) -> httpx.Client: ...


def run_scenario(target: Target, scenario: Scenario) -> dict[str, Any]:
    """Each step's normalized outcome by step name, in order. kubectl gets a cache directory of its own
    for the run, so that no discovery cached from another server answers for this one."""
    outcomes: dict[str, Any] = {}
    with (
        tempfile.TemporaryDirectory(prefix="differential-") as cache,
        target.client(timeout=REQUEST_TIMEOUT) as client,
    ):
        for step in scenario.steps:
            outcomes[step.name] = run_step(target, client, Path(cache), step)
    return outcomes


def run_step(target: Target, client: httpx.Client, cache: Path, step: Step) -> dict[str, Any]:
    if isinstance(step.action, Request):
        return _request(client, step.action, step.keep)
    return _kubectl(target, cache, step.action, step.keep)


def _request(client: httpx.Client, request: Request, keep: frozenset[str] | None) -> dict[str, Any]:
    content: bytes | None = None
    if isinstance(request.body, str):
        content = request.body.encode()
    elif request.body is not None:
        content = json.dumps(request.body).encode()
    response = _send(client, request, content)
    deadline = time.monotonic() + UNTIL_TIMEOUT
    while request.until not in (None, response.status_code) and time.monotonic() < deadline:
        time.sleep(UNTIL_INTERVAL)
        response = _send(client, request, content)
    outcome: dict[str, Any] = {
        "status": response.status_code,
        "headers": normalize_headers(response.headers),
    }
    outcome["body"] = _body(response, request.watch, keep)
    return outcome


def _send(client: httpx.Client, request: Request, content: bytes | None) -> httpx.Response:
    return client.request(request.method, request.path, headers=request.headers, content=content)


def _body(response: httpx.Response, watch: bool, keep: frozenset[str] | None) -> Any:
    text = response.text
    if watch:
        return [normalize_body(json.loads(line), keep) for line in text.splitlines() if line]
    try:
        return normalize_body(json.loads(text), keep)
    except ValueError:
        return normalize_text(text)


def _kubectl(
    target: Target, cache: Path, run: KubectlRun, keep: frozenset[str] | None
) -> dict[str, Any]:
    kubectl = Kubectl(kubectl_binary(run.version), target.kubeconfig, cache)
    result = kubectl.run(*run.args, stdin=run.stdin, check=False)
    server = target.url
    stdout: Any = result.stdout.replace(server, "<server>")
    if stdout.lstrip().startswith("{"):
        try:
            stdout = normalize_body(json.loads(stdout), keep)
        except ValueError:
            stdout = normalize_terminal(stdout)
    else:
        stdout = normalize_terminal(stdout)
    return {
        "exit": result.returncode,
        "stdout": stdout,
        "stderr": normalize_terminal(result.stderr.replace(server, "<server>")),
    }
