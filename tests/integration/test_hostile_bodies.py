"""Hostile request bodies through a real server: amplifying YAML, bodies nested past the depth
bound, JSON patches that double a list, strategic merge directives with bad values. Each gets a 4xx with
kube's reason and message, quickly, and the server goes on answering; an object nested exactly as deep as the
bound goes through every stage (create, merge patch, JSON patch, apply, list, watch, Table, YAML).

The decode bounds live in apiserver/encoding (limits.load_json, kubeyaml.load_body) and the patch libraries;
the endpoints call them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from apiserver.encoding.limits import MAX_DEPTH
from tests.crdproject import crd_yaml, serve_crd
from tests.serverproc import ServerProcess

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
DEEPS = "/apis/deep.example.com/v1/namespaces/default/deeps"
YAML = {"content-type": "application/yaml"}
APPLY = {"content-type": "application/apply-patch+yaml"}
MERGE = {"content-type": "application/merge-patch+json"}
JSON_PATCH = {"content-type": "application/json-patch+json"}
STRATEGIC = {"content-type": "application/strategic-merge-patch+json"}
QUICK = 5.0  # seconds: each refusal takes milliseconds (the issue measured 7 s and hangs); room for load

CRD = crd_yaml(
    "deep.example.com",
    "Deep",
    """
    type: object
    x-kubernetes-preserve-unknown-fields: true
    x-kubernetes-validations:
    - rule: "self == oldSelf || true"
    """,
)


@pytest.fixture(scope="module")
def deep_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server for a kind whose spec keeps whatever it is given, however deep."""
    root, data = tmp_path_factory.mktemp("deep-project"), tmp_path_factory.mktemp("deep-data")
    process = serve_crd(root, data, "deep.example.com", CRD)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def deep(deep_server: ServerProcess) -> Iterator[httpx.Client]:
    with deep_server.client(timeout=30) as http:
        yield http


def status_of(response: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    assert response.status_code == code, response.text[:2000]
    status: dict[str, Any] = response.json()
    assert (status["kind"], status["status"], status["reason"]) == ("Status", "Failure", reason)
    return status


def timed(send: Any) -> httpx.Response:
    started = time.monotonic()
    response: httpx.Response = send()
    assert time.monotonic() - started < QUICK, "the server took too long to refuse it"
    return response


def still_ready(client: httpx.Client) -> None:
    assert client.get("/readyz").status_code == 200


def nested(levels: int) -> Any:
    """``levels`` objects, one in another."""
    value: Any = "leaf"
    for _ in range(levels):
        value = {"a": value}
    return value


def deep_object(name: str, levels: int) -> dict[str, Any]:
    """A Deep nested ``levels`` deep in all: the root, then ``levels - 1`` objects from spec down."""
    return {
        "apiVersion": "deep.example.com/v1",
        "kind": "Deep",
        "metadata": {"name": name},
        "spec": nested(levels - 1),
    }


# --- YAML: aliases and anchors -------------------------------------------------------------------------------


def amplifying_configmap(name: str, copies: int = 3000) -> bytes:
    """129 KB whose aliases point ``copies`` times at one 100 KB string: 300 MB once expanded."""
    head = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata:\n  k0: &s ".encode()
    aliases = b"".join(b"  k%d: *s\n" % i for i in range(1, copies + 1))
    return head + b"x" * 100_000 + b"\n" + aliases


def test_amplifying_yaml_is_refused_with_kubes_413(client: httpx.Client) -> None:
    response = timed(
        lambda: client.post(CONFIGMAPS, content=amplifying_configmap("amp"), headers=YAML)
    )
    status = status_of(response, 413, "RequestEntityTooLarge")
    assert status["message"] == "Request entity too large: limit is 3145728"
    assert client.get(f"{CONFIGMAPS}/amp").status_code == 404
    still_ready(client)


def test_amplifying_yaml_is_refused_through_apply_too(client: httpx.Client) -> None:
    response = timed(
        lambda: client.patch(
            f"{CONFIGMAPS}/amp-apply",
            content=amplifying_configmap("amp-apply"),
            headers=APPLY,
            params={"fieldManager": "hostile"},
        )
    )
    status_of(response, 413, "RequestEntityTooLarge")
    still_ready(client)


def test_yaml_aliases_within_the_bound_are_copies(client: httpx.Client) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aliased\n  labels: &l {a: b}\n"
    body += b"  annotations: *l\ndata: {k: v}\n"
    created = client.post(CONFIGMAPS, content=body, headers=YAML)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["annotations"] == {"a": "b"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: laughs}\ndata:\n  a0: &a0 lol\n"
            + b"".join(
                b"  a%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a%d" % (i - 1)] * 9))
                for i in range(1, 10)
            ),
            "yaml: document contains excessive aliasing",
            id="billion laughs: go-yaml's alias ratio",
        ),
        pytest.param(
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: loop, labels: *m}\n",
            "yaml: anchor 'm' value contains itself",
            id="recursive alias",
        ),
        pytest.param(
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: "
            + b"[" * MAX_DEPTH
            + b"]" * MAX_DEPTH,
            f"yaml: exceeded max depth of {MAX_DEPTH}",
            id="nested past the bound",
        ),
        pytest.param(
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inf}\nx: .inf\n",
            "json: unsupported value: +Inf",
            id="a float JSON cannot hold",
        ),
    ],
)
def test_yaml_go_yaml_refuses_is_a_400(client: httpx.Client, body: bytes, message: str) -> None:
    status = status_of(
        timed(lambda: client.post(CONFIGMAPS, content=body, headers=YAML)), 400, "BadRequest"
    )
    assert message in status["message"]
    still_ready(client)


# --- nesting depth: one bound at decode, every later stage within it -------------------------------------


def test_an_object_as_deep_as_the_bound_goes_through_every_stage(deep: httpx.Client) -> None:
    obj = deep_object("at-bound", MAX_DEPTH)
    assert deep.post(DEEPS, json=obj).status_code == 201
    item = f"{DEEPS}/at-bound"
    # merge patch, JSON patch, server-side apply, each body and each result as deep as the bound
    merge = {"spec": {"b": nested(MAX_DEPTH - 2)}}
    assert deep.patch(item, content=json.dumps(merge), headers=MERGE).status_code == 200
    ops = [{"op": "add", "path": "/spec/c", "value": nested(MAX_DEPTH - 2)}]
    assert deep.patch(item, content=json.dumps(ops), headers=JSON_PATCH).status_code == 200
    applied = {**obj, "spec": {"z": nested(MAX_DEPTH - 2)}}
    response = deep.patch(
        item,
        content=json.dumps(applied),
        headers=APPLY,
        params={"fieldManager": "m", "force": "true"},
    )
    assert response.status_code == 200, response.text[:500]
    # served as an item, in a List, as a Table, as YAML and in a watch
    assert deep.get(item).status_code == 200
    assert deep.get(DEEPS).status_code == 200
    table = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    assert deep.get(item, headers=table).status_code == 200
    assert deep.get(item, headers={"accept": "application/yaml"}).status_code == 200
    watch = deep.get(DEEPS, params={"watch": "1", "timeoutSeconds": "1"})
    assert watch.status_code == 200 and '"ERROR"' not in watch.text


def test_a_body_nested_past_the_bound_is_a_400(deep: httpx.Client) -> None:
    status = status_of(
        timed(lambda: deep.post(DEEPS, json=deep_object("past", MAX_DEPTH + 1))), 400, "BadRequest"
    )
    assert "exceeded max depth" in status["message"]
    # JSON's own bound (orjson parses 1,024 levels), and far past it
    for levels in (1000, 100_000):
        body = (
            b'{"apiVersion":"deep.example.com/v1","kind":"Deep","spec":'
            + b"[" * levels
            + b"]" * levels
            + b"}"
        )
        status_of(
            timed(
                lambda body=body: deep.post(
                    DEEPS, content=body, headers={"content-type": "application/json"}
                )
            ),
            400,
            "BadRequest",
        )
    still_ready(deep)


@pytest.mark.parametrize(
    ("headers", "patch"),
    [
        pytest.param(MERGE, {"spec": {"b": nested(MAX_DEPTH)}}, id="merge patch"),
        pytest.param(
            JSON_PATCH,
            [{"op": "add", "path": "/spec/b", "value": nested(MAX_DEPTH)}],
            id="JSON patch",
        ),
    ],
)
def test_a_patch_nested_past_the_bound_is_a_400(
    deep: httpx.Client, headers: dict[str, str], patch: Any
) -> None:
    name = "patched-" + headers["content-type"].split("/")[1].split("-")[0]
    assert deep.post(DEEPS, json=deep_object(name, 3)).status_code == 201
    response = timed(
        lambda: deep.patch(f"{DEEPS}/{name}", content=json.dumps(patch), headers=headers)
    )
    status = status_of(response, 400, "BadRequest")
    assert "exceeded max depth" in status["message"]


def test_a_json_patch_that_deepens_the_object_past_the_bound_is_a_422(deep: httpx.Client) -> None:
    assert deep.post(DEEPS, json=deep_object("deepened", 3)).status_code == 201
    ops = [{"op": "copy", "from": "/spec", "path": "/spec/a"}] * (MAX_DEPTH + 1)
    response = timed(
        lambda: deep.patch(f"{DEEPS}/deepened", content=json.dumps(ops), headers=JSON_PATCH)
    )
    status = status_of(response, 422, "Invalid")
    assert "exceeded max depth" in json.dumps(status["details"])


# --- JSON patch: bounded copies ------------------------------------------------------------------------------


def test_doubling_copies_are_refused_at_kubes_copy_limit(client: httpx.Client) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "doubling"}}
    assert client.post(CONFIGMAPS, json={**body, "data": {"l": "x" * 50}}).status_code == 201
    ops = [{"op": "copy", "from": "/data", "path": f"/data/{i}"} for i in range(25)]
    assert len(json.dumps(ops)) < 2048
    response = timed(
        lambda: client.patch(f"{CONFIGMAPS}/doubling", content=json.dumps(ops), headers=JSON_PATCH)
    )
    # handlers/patch.go: a failed operation is NewGenericServerResponse(422, ...): the generic message, and
    # json-patch's AccumulatedCopySizeError as the cause
    status = status_of(response, 422, "Invalid")
    assert status["message"] == "the server rejected our request due to an error in our request"
    assert "the accumulated size increase of copy is" in json.dumps(status["details"])
    still_ready(client)


# --- strategic merge patch: directives with bad values -----------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"$patch": "zzz"}, "unknown patch type: zzz in map: map[$patch:zzz]"),
        (
            {"metadata": {"$setElementOrder/finalizers": 5}},
            "expected a []interface {}, but received a int64",
        ),
        (
            {"metadata": {"$setElementOrder/finalizers": {"a": 1}}},
            "expected a []interface {}, but received a map[string]interface {}",
        ),
        ({"metadata": {"$retainKeys": "name"}}, "invalid patch format of retainKeys"),
        (
            {"metadata": {"$deleteFromPrimitiveList": ["a"]}},
            "invalid patch format of primitive list",
        ),
    ],
)
def test_bad_directives_are_400s_with_kubes_message(
    client: httpx.Client, patch: Any, message: str
) -> None:
    name = "directives"
    if client.get(f"{CONFIGMAPS}/{name}").status_code == 404:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        assert client.post(CONFIGMAPS, json=body).status_code == 201
    response = client.patch(f"{CONFIGMAPS}/{name}", content=json.dumps(patch), headers=STRATEGIC)
    status = status_of(response, 400, "BadRequest")
    assert status["message"] == message


def test_the_server_answers_after_all_of_it(client: httpx.Client, deep: httpx.Client) -> None:
    still_ready(client)
    still_ready(deep)
