"""The hostile-input corpus: one live server gets every class of bad request found by the
adversarial pass and the fuzzing that passed — malformed JSON and UTF-8, amplifying YAML, deep nesting, huge
arrays and integers, doubling JSON patches, bad strategic-merge directives, bad selectors and query values,
protobuf garbage, unknown fields named with control characters, broken HTTP framing — and for each asserts:
a 4xx (or the right 2xx), never a 5xx, an answer within a bound, and no write without an answer. At the end
the server still answers, and its memory grew by less than a bound.

Each case is data: (name, method, path, headers, body, the statuses that are right). Cases a finer test
pins to kube's exact words live in test_hostile_bodies, test_query_ranges and test_kube_divergences; here
the point is that none of them, in one run against one process, hurts the server."""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest

from tests.serverproc import ServerProcess, free_port

pytestmark = pytest.mark.timeout(300)
CM = "/api/v1/namespaces/default/configmaps"
CT = "/apis/stable.example.com/v1/namespaces/default/crontabs"
ANSWER_WITHIN = 5.0  # seconds: every refusal takes milliseconds; room for a loaded CI machine
RSS_GROWTH_BOUND = 200 * 1024 * 1024  # the issue saw +570 MB from one amplified body


class Case(NamedTuple):
    name: str
    method: str
    path: str
    content_type: str
    body: bytes
    allowed: tuple[int, ...]


def _yaml_bomb() -> bytes:
    lines = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata: {name: bomb}",
        f"x: &a {'a' * 100_000}",
    ]
    lines.append("data: {" + ", ".join(f"k{i}: *a" for i in range(3000)) + "}")
    return "\n".join(lines).encode()


def _doubling_patch(copies: int) -> bytes:
    ops = [{"op": "add", "path": "/data/x", "value": "y" * 64}]
    ops += [
        {"op": "copy", "from": "/metadata", "path": f"/metadata/annotations/c{i}"}
        for i in range(copies)
    ]
    return json.dumps(ops).encode()


def _token(revision: str) -> str:
    raw = '{"v":"meta.k8s.io/v1","rv":' + revision + ',"start":"a\\u0000"}'
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


JSON, YAML = "application/json", "application/yaml"
MERGE, PATCH = "application/merge-patch+json", "application/json-patch+json"
SMP, APPLY = "application/strategic-merge-patch+json", "application/apply-patch+yaml"
PB = "application/vnd.kubernetes.protobuf"
BAD = (400, 404, 405, 406, 409, 413, 415, 422, 431)

CORPUS = [
    Case("truncated JSON", "POST", CM, JSON, b'{"metadata": {"name": "x"', BAD),
    Case("invalid UTF-8", "POST", CM, JSON, b'{"metadata": {"name": "\xff\xfe"}}', BAD),
    Case("lone surrogate", "POST", CM, JSON, b'{"metadata": {"name": "\\ud800"}}', BAD),
    Case("a JSON array", "POST", CM, JSON, b"[1, 2, 3]", BAD),
    Case("a JSON string", "POST", CM, JSON, b'"configmap"', BAD),
    Case(
        "nested 5,000 deep", "POST", CM, JSON, b'{"data": ' + b"[" * 5000 + b"]" * 5000 + b"}", BAD
    ),
    Case(
        "nested objects",
        "POST",
        CT,
        JSON,
        b'{"spec": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3001,
        BAD,
    ),
    Case(
        "huge array",
        "POST",
        CM,
        JSON,
        b'{"metadata": {"name": "arr"}, "data": {"k": "v"}, "x": [' + b"0," * 500_000 + b"0]}",
        (201, *BAD),
    ),
    # a server-owned field: whatever its value, the create sets it (201), as kube's BeforeCreate does
    Case(
        "integer past 2^64",
        "POST",
        CM,
        JSON,
        b'{"metadata": {"name": "bigint", "generation": 99999999999999999999999}}',
        (201, *BAD),
    ),
    Case(
        "body over 3 MiB",
        "POST",
        CM,
        JSON,
        b'{"metadata": {"name": "big"}, "data": {"k": "' + b"a" * (3 * 1024 * 1024) + b'"}}',
        BAD,
    ),
    Case("YAML alias bomb", "POST", CM, YAML, _yaml_bomb(), BAD),
    Case("recursive YAML alias", "POST", CM, YAML, b"&a [*a]", BAD),
    Case("YAML with tabs and junk", "POST", CM, YAML, b"\t- : : ]\n", BAD),
    Case("protobuf garbage", "POST", CM, PB, b"k8s\x00\x0a\xff\xff\xff\xff\x0f", BAD),
    Case("protobuf without magic", "POST", CM, PB, b"\x00\x01\x02", BAD),
    Case("unknown content type", "POST", CM, "text/plain", b"hello", BAD),
    Case("doubling JSON patch", "PATCH", CM + "/victim", PATCH, _doubling_patch(25), BAD),
    Case("JSON patch not a list", "PATCH", CM + "/victim", PATCH, b'{"op": "add"}', BAD),
    Case(
        "merge patch nested deep",
        "PATCH",
        CM + "/victim",
        MERGE,
        b'{"x": ' * 2000 + b"1" + b"}" * 2000,
        BAD,
    ),
    Case("bad $patch directive", "PATCH", CM + "/victim", SMP, b'{"$patch": "zzz"}', BAD),
    Case(
        "$setElementOrder number",
        "PATCH",
        CM + "/victim",
        SMP,
        b'{"$setElementOrder/data": 5}',
        BAD,
    ),
    Case(
        "$retainKeys not a list",
        "PATCH",
        CM + "/victim",
        SMP,
        b'{"data": {"$retainKeys": "k"}}',
        BAD,
    ),
    Case("apply of a list", "PATCH", CM + "/victim?fieldManager=t", APPLY, b"- a\n- b\n", BAD),
    Case(
        "apply of another name",
        "PATCH",
        CM + "/victim?fieldManager=t",
        APPLY,
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
        BAD,
    ),
    Case(
        "control characters in a field",
        "POST",
        CM,
        JSON,
        b'{"metadata": {"name": "ctl"}, "a\\nb\\u0001": 1}',
        (201,),
    ),
    Case("bad label selector", "GET", CM + "?labelSelector=a%20in%20(", "", b"", BAD),
    Case("bad field selector", "GET", CM + "?fieldSelector=spec.nothing%3Dx", "", b"", BAD),
    Case("limit past int64", "GET", CM + "?limit=99999999999999999999", "", b"", BAD),
    Case(
        "resourceVersion not a number",
        "GET",
        CM + "?resourceVersion=abc&resourceVersionMatch=Exact",
        "",
        b"",
        BAD,
    ),
    Case(
        "resourceVersion past uint64",
        "GET",
        CM + "?resourceVersion=99999999999999999999&resourceVersionMatch=Exact",
        "",
        b"",
        BAD,
    ),
    Case("continue token garbage", "GET", CM + "?limit=1&continue=%%%", "", b"", BAD),
    Case(
        "continue token past int64",
        "GET",
        CM + "?limit=1&continue=" + _token("99999999999999999999"),
        "",
        b"",
        BAD,
    ),
    # kube's parameter codec reads any value but "0" and "false" as true: a watch, ended by its timeout
    Case("watch=maybe", "GET", CM + "?watch=maybe&timeoutSeconds=1", "", b"", (200,)),
    Case("dryRun=Some", "POST", CM + "?dryRun=Some", JSON, b'{"metadata": {"name": "dry"}}', BAD),
    Case(
        "fieldValidation=Loud",
        "POST",
        CM + "?fieldValidation=Loud",
        JSON,
        b'{"metadata": {"name": "fv"}}',
        BAD,
    ),
    Case("deletecollection across namespaces", "DELETE", "/api/v1/configmaps", "", b"", (405,)),
    Case("path traversal in a name", "GET", CM + "/..%2F..%2Fsecrets", "", b"", BAD),
    Case(
        "a namespace that is not a label",
        "POST",
        "/api/v1/namespaces",
        JSON,
        b'{"metadata": {"name": "a.b"}}',
        (422,),
    ),
    Case("garbage Accept", "GET", CM, "", b"", BAD),
]
ACCEPT = {"garbage Accept": "application/garbage"}


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(Path(tmp_path_factory.mktemp("data")), free_port())
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client(timeout=ANSWER_WITHIN * 4) as client:
        victim = {"metadata": {"name": "victim"}, "data": {"k": "v"}}
        assert client.post(CM, json=victim).status_code == 201
        yield client


@pytest.fixture(scope="module")
def baseline_rss(server: ServerProcess, http: httpx.Client) -> int:
    assert server.process is not None
    return rss(server.process.pid)


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_every_hostile_request_gets_a_prompt_4xx_or_the_right_answer(
    http: httpx.Client, baseline_rss: int, case: Case
) -> None:
    headers = {"accept": ACCEPT.get(case.name, "application/json")}
    if case.content_type:
        headers["content-type"] = case.content_type
    started = time.monotonic()
    response = http.request(case.method, case.path, content=case.body or None, headers=headers)
    took = time.monotonic() - started
    assert response.status_code in case.allowed, (response.status_code, response.text[:500])
    assert took < ANSWER_WITHIN, f"{case.name} took {took:.1f} s"
    if response.status_code >= 400:
        assert response.json()["kind"] == "Status"


def test_no_write_lands_without_its_answer(http: httpx.Client) -> None:
    """What was answered 201 exists; what was refused does not."""
    assert http.get(f"{CM}/ctl").status_code == 200  # created, and its 201 was read above
    for refused in ("bomb", "big", "dry", "fv", "other"):
        assert http.get(f"{CM}/{refused}").status_code == 404, refused


def _raw(server: ServerProcess, data: bytes) -> bytes:
    """What the server answers ``data`` with, in TLS, until it closes the connection (it must: each of
    these requests is broken)."""
    with server.connect(timeout=ANSWER_WITHIN) as conn:
        conn.sendall(data)
        chunks = []
        with contextlib.suppress(ConnectionResetError, ssl.SSLEOFError):
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /api/v1 HTTP/9.9\r\n\r\n",
        b"POST "
        + CM.encode()
        + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
        b"POST "
        + CM.encode()
        + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nabcde",
        b"GET /api/v1\x00/namespaces HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
    ids=["not HTTP", "unknown version", "bad chunk", "two lengths", "NUL in the path"],
)
def test_broken_http_framing_is_refused_and_the_server_goes_on(
    server: ServerProcess, http: httpx.Client, request_bytes: bytes
) -> None:
    answer = _raw(server, request_bytes)
    if answer:  # uvicorn answers malformed requests with a 400, or closes the connection
        status = int(answer.split(b" ", 2)[1])
        assert 400 <= status < 500, answer[:200]
    assert http.get("/readyz").status_code == 200


def test_after_the_corpus_the_server_answers_and_its_memory_is_bounded(
    server: ServerProcess, http: httpx.Client, baseline_rss: int
) -> None:
    assert http.get("/readyz").status_code == 200
    assert http.get(f"{CM}/victim").status_code == 200
    assert server.process is not None
    grown = rss(server.process.pid) - baseline_rss
    assert grown < RSS_GROWTH_BOUND, f"server RSS grew by {grown / 2**20:.0f} MiB"
