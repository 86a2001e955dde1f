"""The Request and RequestResponse audit levels through the chain around a real APIServer in-process: the
request's object (JSON whatever the body spoke: JSON, YAML, protobuf) and the response's, as kube's
LogRequestObject and LogResponseObject record them; none for a watch; managedFields left out on request;
a body past the size bound marked truncated instead of copied; and the Audit-Id header on each answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from apiserver.audit.options import AuditOptions
from apiserver.server.options import ChainOptions
from tests.protobufwire import entries, envelope, ln
from tests.unit.server.test_chain import serve

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def policy_file(tmp_path: Path, rules: str, head: str = "") -> AuditOptions:
    path = tmp_path / "policy.yaml"
    path.write_text(f"apiVersion: audit.k8s.io/v1\nkind: Policy\n{head}rules:\n{rules}")
    return AuditOptions(policy_file=str(path))


def audited(tmp_path: Path, audit: AuditOptions, exchange: Any) -> tuple[Any, list[dict[str, Any]]]:
    """What ``exchange`` returned, and the events the log got, ResponseComplete ones only."""
    log = tmp_path / "audit.log"
    result = serve(ChainOptions(audit_log_path=str(log), audit=audit), exchange)
    events = [json.loads(line) for line in log.read_text().splitlines()]
    return result, [event for event in events if event["stage"] == "ResponseComplete"]


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_request_level_records_the_request_s_object_only(tmp_path: Path) -> None:
    audit = policy_file(tmp_path, "- level: Request\n")

    async def exchange(client: httpx.AsyncClient) -> httpx.Response:
        await client.post(CONFIGMAPS, json=configmap("plain", k="v"))
        yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-yaml}\ndata: {k: '1'}\n"
        await client.post(
            CONFIGMAPS, content=yaml_body, headers={"Content-Type": "application/yaml"}
        )
        return await client.get(f"{CONFIGMAPS}/plain")

    read, events = audited(tmp_path, audit, exchange)
    plain, from_yaml, get = events
    assert plain["level"] == "Request"
    assert plain["requestObject"] == configmap("plain", k="v")
    assert from_yaml["requestObject"] == configmap("from-yaml", k="1")  # YAML recorded as its JSON
    assert "requestObject" not in get  # no body, nothing to record
    assert not any("responseObject" in event for event in events)
    assert read.headers["audit-id"] == get["auditID"]


def test_request_response_level_records_both_and_can_omit_managed_fields(tmp_path: Path) -> None:
    rules = (
        "- level: RequestResponse\n  resources: [{group: '', resources: [configmaps]}]\n"
        "  namespaces: [default]\n  omitManagedFields: false\n"
        "- level: RequestResponse\n"
    )
    audit = policy_file(tmp_path, rules, head="omitManagedFields: true\n")

    async def exchange(client: httpx.AsyncClient) -> list[Any]:
        created = await client.post(CONFIGMAPS, json=configmap("kept", k="v"))
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "audited"}}
        made = await client.post("/api/v1/namespaces", json=namespace)
        missing = await client.get(f"{CONFIGMAPS}/missing")
        return [created.json(), made.json(), missing.json()]

    (created, made, missing), events = audited(tmp_path, audit, exchange)
    kept, namespace, not_found = events
    assert kept["responseObject"] == created
    assert kept["responseObject"]["metadata"]["managedFields"]  # the rule's false wins
    assert "managedFields" not in namespace["responseObject"]["metadata"]  # the policy's true
    assert namespace["responseObject"]["metadata"]["uid"] == made["metadata"]["uid"]
    assert not_found["responseObject"] == missing  # an error's Status is its response
    assert not_found["responseObject"]["reason"] == "NotFound"


def test_protobuf_bodies_are_recorded_as_json(tmp_path: Path) -> None:
    audit = policy_file(tmp_path, "- level: RequestResponse\n")
    raw = ln(1, ln(1, "from-protobuf")) + entries(2, {"k": "v"})

    async def exchange(client: httpx.AsyncClient) -> httpx.Response:
        return await client.post(
            CONFIGMAPS,
            content=envelope("v1", "ConfigMap", raw),
            headers={"Content-Type": PROTOBUF, "Accept": PROTOBUF},
        )

    response, [event] = audited(tmp_path, audit, exchange)
    assert response.headers["content-type"] == PROTOBUF
    expected = configmap("from-protobuf", k="v")
    expected["metadata"]["creationTimestamp"] = None  # Go's zero time, as kube's JSON writes it
    assert event["requestObject"] == expected
    answered = event["responseObject"]
    assert (answered["kind"], answered["metadata"]["name"], answered["data"]) == (
        "ConfigMap",
        "from-protobuf",
        {"k": "v"},
    )
    assert answered["metadata"]["uid"]


def test_a_watch_records_no_response_object(tmp_path: Path) -> None:
    audit = policy_file(tmp_path, "- level: RequestResponse\n")

    async def exchange(client: httpx.AsyncClient) -> None:
        await client.post(CONFIGMAPS, json=configmap("watched"))
        response = await client.get(f"{CONFIGMAPS}?watch=1&timeoutSeconds=1")
        assert b"watched" in response.content

    _, events = audited(tmp_path, audit, exchange)
    watch = events[-1]
    assert watch["verb"] == "watch"
    assert "responseObject" not in watch
    assert "requestObject" not in watch


def test_a_body_past_the_bound_is_marked_not_copied(tmp_path: Path) -> None:
    """With truncation on, a body larger than an event may be is not kept at all: the event says
    audit.k8s.io/truncated, as kube's truncating backend says it."""
    rules = "- level: RequestResponse\n"
    path = tmp_path / "policy.yaml"
    path.write_text(f"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n{rules}")
    audit = AuditOptions(policy_file=str(path), truncate_enabled=True, truncate_max_event_size=4096)

    async def exchange(client: httpx.AsyncClient) -> None:
        await client.post(CONFIGMAPS, json=configmap("big", k="x" * 8000))
        await client.post(CONFIGMAPS, json=configmap("small", k="v"))

    _, (big, small) = audited(tmp_path, audit, exchange)
    assert big["annotations"]["audit.k8s.io/truncated"] == "true"
    assert "requestObject" not in big and "responseObject" not in big
    assert small["requestObject"] == configmap("small", k="v")
    assert "audit.k8s.io/truncated" not in small.get("annotations", {})
