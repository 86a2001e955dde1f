"""Scenario files of the differential corpus: one YAML file per topic, a list of steps run in order against a
fresh server. A step is a raw HTTP request or a kubectl invocation:

```yaml
steps:
  - name: a missing ConfigMap
    request: {method: GET, path: /api/v1/namespaces/default/configmaps/nope}
  - name: bad JSON
    request:
      method: POST
      path: /api/v1/namespaces/default/configmaps
      headers: {Content-Type: application/json}
      body: '{"kind": '        # a string is sent as it is; a mapping or a list as JSON
  - name: kubectl lists namespaces
    kubectl: {version: 33, args: [get, namespaces], stdin: null}
    keep: [default, kube-system]  # list entries named otherwise are left out of the comparison
  - name: discovery of the shipped kinds
    request: {method: GET, path: /api/v1}
    keep: shipped               # a list of the scenario's ``sets``
sets:
  shipped: [configmaps, namespaces]
```

A big document (a real CRD) stays a fixture file: ``stdinFile`` on a kubectl step, or ``bodyFile`` (YAML, sent
as JSON) on a request, names it relative to tests/fixtures/.

``until: 200`` on a request repeats it (for up to a minute) until it is answered with that status, and compares
the last answer: a CustomResourceDefinition is served a moment after it is created, by either server.
``until: {present: [metadata, deletionTimestamp]}`` repeats it until its body has a value at that key path
(with ``status`` beside it, and that status): what a controller writes a moment later (the garbage collector
deleting a dependent) is compared once written, on either server.
``watch: true`` on a request reads the response to its end as a stream of watch events (the path sets
``timeoutSeconds``). ``keep`` names the list entries compared where both servers serve more than the corpus is
about (discovery of kinds apiforge does not ship). ``select`` compares only the parts of a large body named by
their key paths (an OpenAPI document's paths and definitions), each under its path joined by ``/``; ``ignore``
names keys left out of the comparison at every depth (an OpenAPI schema's descriptions, which only
``kubectl explain`` shows and which its own steps compare).

``capture: {name: [key, ...]}`` remembers a value of a response's body (a uid, a resourceVersion, a continue
token, an issued token) and ``${name}`` in a later step's path, headers, body, kubectl arguments or stdin is
replaced by it, so that a step can depend on what the server answered before:

```yaml
  - name: the first page
    request: {method: GET, path: '/api/v1/namespaces/default/configmaps?limit=2'}
    capture: {next: [metadata, continue]}
  - name: the second page
    request: {method: GET, path: '/api/v1/namespaces/default/configmaps?limit=2&continue=${next}'}
```"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
DEFAULT_KUBECTL = 33
KUBECTL_VERSIONS = range(27, 34)


class ScenarioError(ValueError):
    """A scenario file that does not say what to run."""


@dataclass(frozen=True)
class Until:
    """The answer a repeated request waits for: this status, and a value at this key path of its body."""

    status: int | None = None
    present: tuple[str, ...] = ()


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    watch: bool = False
    until: Until | None = None


@dataclass(frozen=True)
class KubectlRun:
    args: tuple[str, ...]
    version: int = DEFAULT_KUBECTL
    stdin: str | None = None


@dataclass(frozen=True)
class Step:
    name: str
    action: Request | KubectlRun
    keep: frozenset[str] | None = None
    select: tuple[tuple[str, ...], ...] = ()
    capture: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ignore: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    unordered: frozenset[str] = frozenset()
    """The steps the file's top-level ``unordered`` names: kube lists their errors in Go's random map order
    (kube-openapi walks a schema's ``properties`` as a map), so the lines of their answers' texts are compared
    in any order (``oracle.golden.any_line_order``)."""


def load_scenario(path: Path) -> Scenario:
    document = yaml.safe_load(path.read_text())
    if not isinstance(document, dict) or not isinstance(document.get("steps"), list):
        raise ScenarioError(f"{path}: a mapping with a list of steps expected")
    sets = document.get("sets") or {}
    steps = tuple(_step(path, index, raw, sets) for index, raw in enumerate(document["steps"]))
    names = [step.name for step in steps]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ScenarioError(f"{path}: step names must be unique: {duplicated}")
    unordered = frozenset(str(name) for name in document.get("unordered") or ())
    if not unordered <= set(names):
        raise ScenarioError(f"{path}: unordered names no step: {sorted(unordered - set(names))}")
    return Scenario(path.stem, steps, unordered)


def load_scenarios(directory: Path) -> list[Scenario]:
    return [load_scenario(path) for path in sorted(directory.glob("*.yaml"))]


def _step(path: Path, index: int, raw: Any, sets: dict[str, list[str]]) -> Step:
    where = f"{path}: step {index}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ScenarioError(f"{where}: a mapping with a name expected")
    keep = raw.get("keep")
    if isinstance(keep, str):
        if keep not in sets:
            raise ScenarioError(f"{where}: no set named {keep!r}")
        keep = sets[keep]
    keep_set = frozenset(str(name) for name in keep) if keep is not None else None
    if "request" in raw:
        spec = raw["request"]
        action: Request | KubectlRun = Request(
            method=str(spec["method"]).upper(),
            path=str(spec["path"]),
            headers={str(k): str(v) for k, v in (spec.get("headers") or {}).items()},
            body=yaml.safe_load(_fixture(where, spec["bodyFile"]))
            if "bodyFile" in spec
            else spec.get("body"),
            watch=bool(spec.get("watch", False)),
            until=_until(where, spec["until"]) if "until" in spec else None,
        )
    elif "kubectl" in raw:
        spec = raw["kubectl"]
        version = int(spec.get("version", DEFAULT_KUBECTL))
        if version not in KUBECTL_VERSIONS:
            raise ScenarioError(f"{where}: kubectl 1.{version} is not installed (1.27-1.33 are)")
        stdin = _fixture(where, spec["stdinFile"]) if "stdinFile" in spec else spec.get("stdin")
        action = KubectlRun(tuple(str(a) for a in spec["args"]), version, stdin)
    else:
        raise ScenarioError(f"{where}: a request or a kubectl invocation expected")
    return Step(
        raw["name"],
        action,
        keep_set,
        _select(where, raw),
        _capture(where, raw),
        frozenset(str(key) for key in raw.get("ignore") or ()),
    )


def _until(where: str, raw: Any) -> Until:
    if isinstance(raw, dict):
        status = raw.get("status")
        present = _key_path(where, raw.get("present"))
        return Until(int(status) if status is not None else None, present)
    return Until(int(raw))


def _key_path(where: str, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(f"{where}: a key path is a non-empty list of keys")
    return tuple(str(key) for key in raw)


def _select(where: str, raw: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    return tuple(_key_path(where, path) for path in raw.get("select") or ())


def _capture(where: str, raw: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    captures = raw.get("capture") or {}
    if not isinstance(captures, dict):
        raise ScenarioError(f"{where}: capture maps names to key paths")
    return tuple((str(name), _key_path(where, path)) for name, path in captures.items())


def _fixture(where: str, name: Any) -> str:
    path = FIXTURES / str(name)
    if not path.is_file():
        raise ScenarioError(f"{where}: no fixture file {name!r} under tests/fixtures")
    return path.read_text()
