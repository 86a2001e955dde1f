"""In-process admission hooks (``admissionHooks:`` in a definition) through a real server of a throwaway
project: a validating hook denies with a webhook's words, an async mutating hook patches, a hook that
hangs is cut at its timeout, one that raises fails closed or is ignored by its failurePolicy, one that
changes the object's namespace, name or uid is refused as kube refuses it (nothing stored), and the
generator refuses a hook that does not exist."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generator.definition import DefinitionErrors
from generator.pipeline import GenerateConfig, generate
from tests.serverproc import REPO, ServerProcess, free_port

GIZMOS = "/apis/hooks.example.com/v1/namespaces/default/gizmos"
DEFINITION = """\
group: hooks.example.com
kind: Gizmo
versions:
  v1:
    storage: true
    schema:
      spec:
        size: integer
        mode: string
admissionHooks:
  - name: identity.hooks.example.com
    type: Mutating
    function: gizmo_hooks:change_identity
    objectSelector: {matchExpressions: [{key: identity, operator: Exists}]}
  - name: size.hooks.example.com
    type: Validating
    function: gizmo_hooks:check_size
    operations: [CREATE, UPDATE]
  - name: label.hooks.example.com
    type: Mutating
    function: gizmo_hooks:add_label
  - name: slow.hooks.example.com
    type: Validating
    function: gizmo_hooks:slow
    timeoutSeconds: 1
    objectSelector: {matchLabels: {mode: slow}}
  - name: broken.hooks.example.com
    type: Validating
    function: gizmo_hooks:broken
    matchConditions:
      - name: broken-only
        expression: "has(object.spec.mode) && object.spec.mode == 'broken'"
  - name: ignored.hooks.example.com
    type: Validating
    function: gizmo_hooks:broken
    failurePolicy: Ignore
"""
HOOKS = """\
import asyncio
import time


def change_identity(request):
    field = request["object"]["metadata"]["labels"]["identity"]
    value = {"namespace": "kube-system", "name": "renamed", "uid": "forged"}[field]
    return {"allowed": True, "patch": [{"op": "add", "path": f"/metadata/{field}", "value": value}]}


def check_size(request):
    size = request["object"]["spec"].get("size", 0)
    if size > 10:
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                              "message": f"size {size} is over 10"}}
    return {"allowed": True, "warnings": [f"size {size} checked"]}


async def add_label(request):
    mode = request["object"]["spec"].get("mode", "plain")
    return {"allowed": True,
            "patch": [{"op": "add", "path": "/metadata/labels", "value": {"mode": mode}}]}


def slow(request):
    time.sleep(3)
    return {"allowed": True}


def broken(request):
    raise RuntimeError("the hook broke")
"""


def project(root: Path, hooks: str) -> None:
    """Generate the project in ``root``, starting from a copy of the repository's generated code: the
    built-in kinds' units are reused from its cache rather than rendered again (seconds, not tens)."""
    if not (root / "generated").exists():
        shutil.copytree(REPO / "generated", root / "generated")
    (root / "definitions" / "hooks.example.com").mkdir(parents=True, exist_ok=True)
    (root / "definitions" / "hooks.example.com" / "gizmo.yaml").write_text(DEFINITION)
    (root / "gizmo_hooks.py").write_text(hooks)
    generate(GenerateConfig(root / "definitions", root / "generated", workers=1))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("hooks-project")
    project(root, HOOKS)
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), cwd=root)
    process.start()
    yield process
    process.stop()


def gizmo(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "hooks.example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_validating_hook_denies_in_a_webhooks_words(client: httpx.Client) -> None:
    response = client.post(GIZMOS, json=gizmo("big", size=11))
    assert response.status_code == 403
    assert response.json()["message"] == (
        'admission webhook "size.hooks.example.com" denied the request: size 11 is over 10'
    )


def test_mutating_hook_patches_and_warnings_pass_through(client: httpx.Client) -> None:
    response = client.post(GIZMOS, json=gizmo("small", size=3, mode="fast"))
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["labels"] == {"mode": "fast"}
    assert response.headers["warning"] == '299 - "size 3 checked"'


def test_a_hook_that_hangs_is_cut_at_its_timeout(client: httpx.Client) -> None:
    response = client.post(GIZMOS, json=gizmo("slow", size=1, mode="slow"))
    assert response.status_code == 500
    assert response.json()["message"] == (
        'Internal error occurred: failed calling webhook "slow.hooks.example.com": '
        "context deadline exceeded"
    )
    assert client.get(f"{GIZMOS}/slow").status_code == 404


def test_a_hook_that_raises_fails_closed_unless_ignored(client: httpx.Client) -> None:
    response = client.post(GIZMOS, json=gizmo("broken", size=1, mode="broken"))
    assert response.status_code == 500
    assert response.json()["message"] == (
        'Internal error occurred: failed calling webhook "broken.hooks.example.com": the hook '
        "raised RuntimeError: the hook broke"
    )
    # the same function under failurePolicy Ignore (and no match condition) let every other write through
    assert client.post(GIZMOS, json=gizmo("fine", size=1)).status_code == 201


def test_a_hook_moving_a_create_to_another_namespace_is_400_and_stores_nothing(
    client: httpx.Client,
) -> None:
    """kube's BeforeCreate (EnsureObjectNamespaceMatchesRequestNamespace) after every mutating hook."""
    body = gizmo("moved", size=1)
    body["metadata"]["labels"] = {"identity": "namespace"}
    response = client.post(GIZMOS, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    assert client.get(f"{GIZMOS}/moved").status_code == 404
    elsewhere = client.get(
        "/apis/hooks.example.com/v1/gizmos", params={"fieldSelector": "metadata.name=moved"}
    )
    assert elsewhere.json()["items"] == []


@pytest.mark.parametrize(("field", "code"), [("namespace", 400), ("name", 422), ("uid", 422)])
def test_a_hook_changing_identity_on_update_is_refused_and_changes_nothing(
    client: httpx.Client, field: str, code: int
) -> None:
    """kube's BeforeUpdate: another namespace is a 400, another name or uid 422 ``field is immutable``."""
    name = f"kept-{field}"
    stored = client.post(GIZMOS, json=gizmo(name, size=1)).json()
    patch = {"metadata": {"labels": {"identity": field}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    response = client.patch(f"{GIZMOS}/{name}", json=patch, headers=headers)
    assert response.status_code == code, response.text
    if code == 422:
        assert response.json()["details"]["causes"][0]["field"] == f"metadata.{field}"
    assert client.get(f"{GIZMOS}/{name}").json() == stored


def test_the_generator_refuses_a_missing_hook(tmp_path: Path) -> None:
    with pytest.raises(DefinitionErrors) as raised:
        project(tmp_path, textwrap.dedent("def check_size(request):\n    return {}\n"))
    messages = [str(error) for error in raised.value.errors]
    assert any(
        'admissionHooks[2].function: module "gizmo_hooks" defines no "add_label"' in m
        for m in messages
    )
