"""The differential runner's own rules: what normalization hides and what it keeps, and how a replay is judged
against a golden and the divergences file, so that a difference can neither be hidden nor outlive its fix."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

from oracle.golden import Divergence, judge, read_divergences, stale_divergences
from oracle.normalize import normalize_body, normalize_headers, normalize_terminal, normalize_text
from oracle.scenario import KubectlRun, Request, ScenarioError, load_scenario
from tests.serverproc import FIXTURES

CREATED = {
    "kind": "ConfigMap",
    "metadata": {
        "generateName": "gen-",
        "name": "gen-x7k2p",
        "uid": "6f1c2a3b-1111-4222-8333-944455556666",
        "resourceVersion": "1234",
        "creationTimestamp": "2026-12-02T04:00:00Z",
        "labels": {"copy": "gen-x7k2p"},
        "managedFields": [{"manager": "kubectl", "time": "2026-12-02T04:00:00Z"}],
    },
    "data": {"a": "1"},
}


def test_what_varies_is_replaced() -> None:
    metadata = normalize_body(CREATED)["metadata"]
    assert metadata == {
        "generateName": "gen-",
        "name": "gen-<random>",
        "uid": "<uid>",
        "resourceVersion": "<rv>",
        "creationTimestamp": "<time>",
        "labels": {"copy": "gen-<random>"},
        "managedFields": [{"manager": "kubectl", "time": "<time>"}],
    }


def test_what_clients_read_is_kept() -> None:
    status = {"kind": "Status", "code": 409, "reason": "Conflict", "message": 'the "x" is old'}
    assert normalize_body(status) == status
    assert normalize_body({"metadata": {"resourceVersion": ""}}) == {
        "metadata": {"resourceVersion": ""}
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NAME   DATA   AGE\none    1      12s\n", "NAME   DATA   AGE\none    1      <age>\n"),
        ("kc     1      3m20s", "kc     1      <age>"),
        ('resourceVersion: "42"', 'resourceVersion: "<rv>"'),
        ('{"resourceVersion":"42"}', '{"resourceVersion":"<rv>"}'),
        ("dial tcp 127.0.0.1:40123: refused", "dial tcp <server>: refused"),
        ("name-12s  1", "name-12s  1"),
    ],
)
def test_text(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


def test_terminal_drops_padding_only() -> None:
    assert normalize_terminal("NAME   VERBS   \nroles  get     \n") == "NAME   VERBS\nroles  get\n"


def test_keep_drops_unnamed_entries_only() -> None:
    discovery = {"resources": [{"name": "pods"}, {"name": "configmaps"}, {"verbs": ["get"]}]}
    assert normalize_body(discovery, frozenset({"configmaps"})) == {
        "resources": [{"name": "configmaps"}, {"verbs": ["get"]}]
    }


def test_headers() -> None:
    headers = httpx.Headers(
        [
            ("Content-Type", "application/json"),
            ("Warning", "299 - a"),
            ("Warning", "299 - b"),
            ("Audit-Id", "abc"),
            ("Date", "now"),
        ]
    )
    assert normalize_headers(headers) == {
        "content-type": "application/json",
        "warning": ["299 - a", "299 - b"],
        "audit-id": True,
    }


KUBE = {"status": 405}
OURS = {"status": 403}


def _divergence(
    oracle: object = KUBE, apiforge: object = OURS
) -> dict[tuple[str, str], Divergence]:
    return {("ns", "delete"): Divergence("ns", "delete", "open", "being fixed", oracle, apiforge)}


def test_judge() -> None:
    golden = {"delete": KUBE}
    assert judge("ns", golden, {"delete": KUBE}, {}) == []
    assert "differs from kube" in judge("ns", golden, {"delete": OURS}, {})[0]
    assert judge("ns", golden, {"delete": OURS}, _divergence()) == []
    assert "remove the divergence" in judge("ns", golden, {"delete": KUBE}, _divergence())[0]
    assert (
        "differs from the divergence"
        in judge("ns", golden, {"delete": {"status": 500}}, _divergence())[0]
    )
    assert (
        "not the golden's" in judge("ns", golden, {"delete": OURS}, _divergence({"status": 1}))[0]
    )
    assert "steps" in judge("ns", golden, {}, {})[0]
    assert stale_divergences(_divergence(), {"ns": {}}) == [
        "divergence ns/delete: no such recorded step"
    ]


def test_a_divergence_needs_a_why(tmp_path: Path) -> None:
    path = tmp_path / "divergences.yaml"
    path.write_text("- {scenario: a, step: b, state: open, why: '', oracle: 1, apiforge: 2}\n")
    with pytest.raises(ValueError, match="a state and a why"):
        read_divergences(path)


def test_scenario_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("steps:\n- {name: a, kubectl: {version: 20, args: [version]}}\n")
    with pytest.raises(ScenarioError, match=r"1\.20 is not installed"):
        load_scenario(path)
    path.write_text(
        "steps:\n- {name: a, request: {method: GET, path: /}}\n- {name: a, request: {method: GET, path: /}}\n"
    )
    with pytest.raises(ScenarioError, match="unique"):
        load_scenario(path)
    path.write_text("steps:\n- {name: a, request: {method: GET, path: /}, keep: nothing}\n")
    with pytest.raises(ScenarioError, match="no set named"):
        load_scenario(path)
    path.write_text(
        "steps:\n- {name: a, kubectl: {args: [apply, -f, '-'], stdinFile: crd-corpus/none.yaml}}\n"
    )
    with pytest.raises(ScenarioError, match=r"no fixture file 'crd-corpus/none\.yaml'"):
        load_scenario(path)


def test_big_documents_are_read_from_fixture_files(tmp_path: Path) -> None:
    """A real CRD stays a fixture: kubectl reads it on stdin, a request sends it as JSON."""
    crd = "crd-corpus/kyverno/kyverno.io_policyexceptions.yaml"
    path = tmp_path / "s.yaml"
    path.write_text(
        "steps:\n"
        f"- {{name: a, kubectl: {{args: [apply, -f, '-'], stdinFile: {crd}}}}}\n"
        f"- {{name: b, request: {{method: POST, path: /x, bodyFile: {crd}}}}}\n"
    )
    kubectl, request = (step.action for step in load_scenario(path).steps)
    text = (FIXTURES / crd).read_text()
    assert isinstance(kubectl, KubectlRun) and kubectl.stdin == text
    assert isinstance(request, Request) and request.body == yaml.safe_load(text)
