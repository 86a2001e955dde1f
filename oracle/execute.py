"""Run a scenario's steps against a server, apiforge or the oracle alike, and return each step's outcome
normalized (``oracle/normalize.py``), ready to be compared with or recorded as a golden."""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

import httpx

from oracle.normalize import normalize_body, normalize_headers, normalize_terminal, normalize_text
from oracle.scenario import KubectlRun, Request, Scenario, Step, Until
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
    captured: dict[str, str] = {}
    with (
        tempfile.TemporaryDirectory(prefix="differential-") as cache,
        target.client(timeout=REQUEST_TIMEOUT) as client,
    ):
        for step in scenario.steps:
            outcomes[step.name] = run_step(target, client, Path(cache), step, captured)
    return outcomes


def run_step(
    target: Target,
    client: httpx.Client,
    cache: Path,
    step: Step,
    captured: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The step's normalized outcome; what it captures is added to ``captured`` (a value not there: "")."""
    captured = {} if captured is None else captured
    action = substitute(step.action, captured)
    if isinstance(action, Request):
        outcome, document = _request(client, action)
    else:
        outcome, document = _kubectl(target, cache, action)
    for name, path in step.capture:
        value = _at(document, path)
        captured[name] = "" if value is None else str(value)
    body = "body" if isinstance(action, Request) else "stdout"
    if step.select and not isinstance(outcome[body], str):
        outcome[body] = {"/".join(path): _at(outcome[body], path) for path in step.select}
    if step.ignore:
        outcome[body] = _without(outcome[body], step.ignore)
    if isinstance(action, Request) and action.watch:
        outcome[body] = [normalize_body(event, step.keep) for event in outcome[body]]
    elif not isinstance(outcome[body], str):
        outcome[body] = normalize_body(outcome[body], step.keep)
    return outcome


VARIABLE = re.compile(r"\$\{(?:([A-Za-z_][A-Za-z0-9_]*)|(.)\*(\d+))\}")
"""``${name}``: a captured value; ``${x*300}``: the character x 300 times (a body or a header over a limit)."""


def substitute(action: Any, captured: dict[str, str]) -> Any:
    """``action`` with each ``${name}`` in its strings replaced by the value captured under that name, and
    each ``${x*N}`` by N times x."""
    if isinstance(action, str):
        return VARIABLE.sub(lambda match: _expand(match, captured), action)
    if isinstance(action, dict):
        return {
            substitute(key, captured): substitute(value, captured) for key, value in action.items()
        }
    if isinstance(action, (list, tuple)):
        return type(action)(substitute(value, captured) for value in action)
    if isinstance(action, (Request, KubectlRun)):
        return dataclasses.replace(
            action,
            **{
                item.name: substitute(getattr(action, item.name), captured)
                for item in dataclasses.fields(action)
            },
        )
    return action


def _expand(match: re.Match[str], captured: dict[str, str]) -> str:
    name, character, times = match.groups()
    if name is None:
        return str(character) * int(times)
    return captured.get(name, match.group(0))


def _at(document: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if isinstance(document, list) and key.isdigit() and int(key) < len(document):
            document = document[int(key)]
        elif isinstance(document, dict):
            document = document.get(key)
        else:
            return None
    return document


def _without(document: Any, keys: frozenset[str]) -> Any:
    if isinstance(document, dict):
        return {key: _without(value, keys) for key, value in document.items() if key not in keys}
    if isinstance(document, list):
        return [_without(value, keys) for value in document]
    return document


def _request(client: httpx.Client, request: Request) -> tuple[dict[str, Any], Any]:
    """The outcome with the body decoded but not normalized yet, and the decoded body."""
    content: bytes | None = None
    if isinstance(request.body, str):
        content = request.body.encode()
    elif request.body is not None:
        content = json.dumps(request.body).encode()
    response = _send(client, request, content)
    deadline = time.monotonic() + UNTIL_TIMEOUT
    while not _arrived(request.until, response) and time.monotonic() < deadline:
        time.sleep(UNTIL_INTERVAL)
        response = _send(client, request, content)
    body = _body(response, request.watch)
    outcome = {
        "status": response.status_code,
        "headers": normalize_headers(response.headers),
        "body": body,
    }
    return outcome, body


def _arrived(until: Until | None, response: httpx.Response) -> bool:
    """Whether ``response`` is the answer a repeated request waits for (any, when it waits for none)."""
    if until is None:
        return True
    if until.status is not None and response.status_code != until.status:
        return False
    if not until.present:
        return True
    try:
        return _at(response.json(), until.present) is not None
    except ValueError:
        return False


def _send(client: httpx.Client, request: Request, content: bytes | None) -> httpx.Response:
    return client.request(request.method, request.path, headers=request.headers, content=content)


def _body(response: httpx.Response, watch: bool) -> Any:
    """The decoded JSON; a stream of JSON documents (a watch, asked for or not) as their list, so that it
    is compared event by event rather than as text in which key order shows; other text normalized."""
    text = response.text
    if watch:
        return _stream(text)
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return _stream(text) if text.strip() else normalize_text(text)
    except ValueError:
        return normalize_text(text)


def _stream(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line]


def _kubectl(target: Target, cache: Path, run: KubectlRun) -> tuple[dict[str, Any], Any]:
    """The outcome with JSON output decoded but not normalized yet, and that JSON (else None)."""
    kubectl = Kubectl(kubectl_binary(run.version), target.kubeconfig, cache)
    result = kubectl.run(*run.args, stdin=run.stdin, check=False)
    server = target.url
    stdout: Any = result.stdout.replace(server, "<server>")
    document: Any = None
    if stdout.lstrip().startswith("{"):
        try:
            document = stdout = json.loads(stdout)
        except ValueError:
            stdout = normalize_terminal(stdout)
    else:
        stdout = normalize_terminal(stdout)
    outcome = {
        "exit": result.returncode,
        "stdout": stdout,
        "stderr": normalize_terminal(result.stderr.replace(server, "<server>")),
    }
    return outcome, document
