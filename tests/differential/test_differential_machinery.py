"""The differential runner's own rules: what normalization hides and what it keeps, and how a replay is judged
against a golden and the divergences file, so that a difference can neither be hidden nor outlive its fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from oracle.execute import run_step, substitute
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
    assert normalize_terminal("NAME   VERBS   \nroles  get     \n") == "NAME  VERBS\nroles  get\n"
    # column gaps follow the widest cell (an age here): two spaces, whatever the width
    assert normalize_terminal("NAME  AGE   LABELS\na     12s   x=y\n") == (
        "NAME  AGE  LABELS\na  <age>  x=y\n"
    )
    assert normalize_terminal("  indented:    value") == "  indented:  value"


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


def test_captured_values_and_repeats_are_substituted() -> None:
    request = Request(
        "POST",
        "/api/v1/namespaces/default/configmaps?continue=${next}",
        headers={"X-Pad": "${p*3}"},
        body={"metadata": {"name": "${missing}", "labels": {"${k*2}": "${uid}"}}},
    )
    substituted = substitute(request, {"next": "abc", "uid": "1234"})
    assert substituted.path.endswith("?continue=abc")
    assert substituted.headers == {"X-Pad": "ppp"}
    assert substituted.body == {"metadata": {"name": "${missing}", "labels": {"kk": "1234"}}}
    run = substitute(KubectlRun(("get", "cm", "${name}"), stdin="name: ${name}"), {"name": "x"})
    assert run == KubectlRun(("get", "cm", "x"), stdin="name: x")


class _Answers:
    """A Target whose client answers from a table of bodies by path."""

    url = "https://127.0.0.1:1"
    kubeconfig = Path("/nonexistent")

    def __init__(self, bodies: dict[str, object]) -> None:
        self.seen: list[str] = []
        self.bodies = bodies

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(str(request.url.copy_with(scheme=None, host=None, port=None)))
        body = self.bodies[request.url.path]
        return (
            httpx.Response(200, json=body)
            if not isinstance(body, str)
            else httpx.Response(200, text=body)
        )


def _run(
    tmp_path: Path, raw_steps: list[dict[str, Any]], bodies: dict[str, object]
) -> tuple[dict[str, Any], list[str]]:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"steps": raw_steps}))
    scenario = load_scenario(path)
    answers: Any = _Answers(bodies)
    captured: dict[str, str] = {}
    with httpx.Client(
        base_url="https://x", transport=httpx.MockTransport(answers.handler)
    ) as client:
        outcomes = {
            step.name: run_step(answers, client, tmp_path, step, captured)
            for step in scenario.steps
        }
    return outcomes, answers.seen


def test_capture_select_and_ignore(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [
        {
            "name": "page",
            "request": {"method": "GET", "path": "/a"},
            "capture": {"next": ["metadata", "continue"], "first": ["items", "0", "name"]},
        },
        {
            "name": "next",
            "request": {"method": "GET", "path": "/b?continue=${next}&after=${first}"},
        },
        {
            "name": "openapi",
            "request": {"method": "GET", "path": "/c"},
            "select": [
                ["paths", "/api/v1/x"],
                ["definitions", "io.k8s.X"],
                ["definitions", "missing"],
            ],
            "ignore": ["description"],
        },
    ]
    bodies = {
        "/a": {"metadata": {"continue": "tok"}, "items": [{"name": "one"}]},
        "/b": {},
        "/c": {
            "paths": {
                "/api/v1/x": {"get": {"description": "d", "x-kubernetes-action": "get"}},
                "/other": {},
            },
            "definitions": {"io.k8s.X": {"description": "long", "type": "object"}},
        },
    }
    outcomes, seen = _run(tmp_path, steps, bodies)
    assert seen[1] == "/b?continue=tok&after=one"
    assert outcomes["page"]["body"] == {
        "metadata": {"continue": "<continue>"},
        "items": [{"name": "one"}],
    }
    assert outcomes["openapi"]["body"] == {
        "paths//api/v1/x": {"get": {"x-kubernetes-action": "get"}},
        "definitions/io.k8s.X": {"type": "object"},
        "definitions/missing": None,
    }


def test_until_repeats_a_request_until_its_answer_holds_the_value(tmp_path: Path) -> None:
    """A controller's write (the garbage collector deleting a dependent) is compared once it is there:
    the request is repeated past a 404 and an answer without the value, and the last answer is compared."""
    answers = [
        httpx.Response(404, json={"kind": "Status"}),
        httpx.Response(200, json={"metadata": {"name": "d"}}),
        httpx.Response(200, json={"metadata": {"name": "d", "deletionTimestamp": "2026-01-01T00:00:00Z"}}),
    ]  # fmt: skip
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answers[min(len(sent), len(answers)) - 1]

    path = tmp_path / "s.yaml"
    wait = {"status": 200, "present": ["metadata", "deletionTimestamp"]}
    path.write_text(yaml.safe_dump({"steps": [{"name": "held", "request": {"method": "GET", "path": "/d", "until": wait}}]}))  # fmt: skip
    [step] = load_scenario(path).steps
    target: Any = _Answers({})
    transport = httpx.MockTransport(handler)
    with httpx.Client(base_url="https://x", transport=transport) as client:
        outcome = run_step(target, client, tmp_path, step)
    assert len(sent) == 3
    assert outcome["body"] == {"metadata": {"name": "d", "deletionTimestamp": "<time>"}}
    path.write_text("steps:\n- {name: a, request: {method: GET, path: /, until: {present: []}}}\n")
    with pytest.raises(ScenarioError, match="key path"):
        load_scenario(path)


def test_a_stream_read_without_watch_is_compared_event_by_event(tmp_path: Path) -> None:
    stream = '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1"}}\n{"type":"BOOKMARK","object":{}}\n'
    outcomes, _ = _run(
        tmp_path, [{"name": "s", "request": {"method": "GET", "path": "/w"}}], {"/w": stream}
    )
    assert outcomes["s"]["body"] == [
        {"type": "ADDED", "object": {"kind": "ConfigMap", "apiVersion": "v1"}},
        {"type": "BOOKMARK", "object": {}},
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("token: eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_x", "token: <jwt>"),
        ("/openapi/v3/api/v1?hash=0AF9e1", "/openapi/v3/api/v1?hash=<hash>"),
    ],
)
def test_tokens_and_hashes(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


def test_what_varies_between_runs_in_objects_is_replaced() -> None:
    uid = "6f1c2a3b-1111-4222-8333-944455556666"
    service = {
        "metadata": {
            "generateName": "g" * 250,
            "name": "g" * 58 + "x7k2p",
            "managedFields": [
                {"manager": "bob", "operation": "Update"},
                {"manager": "alice", "operation": "Apply"},
                {"manager": "alice", "operation": "Update"},
            ],
            "ownerReferences": [{"uid": uid}],
        },
        "fields": {f'k:{{"uid":"{uid}"}}': {}},
        "spec": {"clusterIP": "10.0.0.17", "clusterIPs": ["10.0.0.17"]},
    }
    normalized = normalize_body(service)
    assert normalized["metadata"]["name"] == "g" * 58 + "<random>"
    assert [(e["operation"], e["manager"]) for e in normalized["metadata"]["managedFields"]] == [
        ("Apply", "alice"),
        ("Update", "alice"),
        ("Update", "bob"),
    ]
    assert normalized["fields"] == {'k:{"uid":"<uid>"}': {}}
    assert normalized["spec"] == {"clusterIP": "<allocated-ip>", "clusterIPs": ["<allocated-ip>"]}
    headless = normalize_body({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}})
    assert headless == {"spec": {"clusterIP": "None", "clusterIPs": ["None"]}}


def test_kubectl_diff_paths_and_times() -> None:
    header = (
        "--- /tmp/LIVE-3106294491/v1.ConfigMap.default.old\t2026-12-02 08:19:15.320176327 +0000"
    )
    assert normalize_terminal(header) == "--- /tmp/LIVE-<random>/v1.ConfigMap.default.old\t<time>"


def test_a_certificate_fingerprint_is_a_placeholder() -> None:
    """Each server's PKI issues its own admin certificate: the credential-id extra names it by digest."""
    digest = "6c3802e4ed4f44c11d6a842e3c11424660c6c7e65536dba39949979f990614cc"
    extra = {"authentication.kubernetes.io/credential-id": [f"X509SHA256={digest}"]}
    assert normalize_body(extra) == {
        "authentication.kubernetes.io/credential-id": ["X509SHA256=<fingerprint>"]
    }
    assert normalize_text(f"X509SHA256={digest[:-1]}") == f"X509SHA256={digest[:-1]}"
