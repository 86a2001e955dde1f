"""kubectl's typed commands against a real server: 1.27 speaks JSON, 1.33 sends built-in kinds as protobuf and
reads protobuf back (`kubectl create service clusterip` failed with a 415). And what any client sees
when it asks for protobuf: built-in objects, lists, Status errors and watch streams in protobuf, custom
resources in JSON, as from kube."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from apiserver.encoding.protobuf import (
    CONTENT_TYPE,
    Field,
    Message,
    decode,
    decode_envelope,
    decode_message,
)
from apiserver.encoding.protobuf_meta import PARTIAL_OBJECT_METADATA_LIST, STATUS
from generated.server import build_scheme
from tests.kubectl import Kubectl, kubectl_binary
from tests.protobufwire import envelope, ln
from tests.serverproc import ServerProcess

WATCH_EVENT = Message(  # metav1.WatchEvent, with its RawExtension object
    "WatchEvent",
    (Field(1, "type"), Field(2, "object", Message("RawExtension", (Field(1, "raw", "bytes"),)))),
)
PROTOBUF_FIRST = {"Accept": "application/vnd.kubernetes.protobuf, application/json"}
CODECS = {
    (resource.api_version(v.name), resource.kind): v.protobuf
    for resource in build_scheme()
    for v in resource.versions
    if v.protobuf is not None
}


def message(kind: str, api_version: str = "v1", listed: bool = False) -> Message:
    codec = CODECS[(api_version, kind)]
    return codec.list if listed else codec.message


@pytest.fixture(scope="module", params=[27, 33], ids=lambda minor: f"kubectl-1.{minor}")
def kubectl(
    request: pytest.FixtureRequest, server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kubectl]:
    namespace = f"typed-1-{request.param}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    assert server.http("POST", "/api/v1/namespaces", json=body).status_code == 201
    yield Kubectl(
        kubectl_binary(request.param),
        server.kubeconfig,
        tmp_path_factory.mktemp("cache"),
        namespace,
    )


@pytest.fixture(scope="module")
def tls_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "tls.crt", directory / "tls.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=web", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def get_yaml(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(kubectl.run("get", *args, "-o", "yaml").stdout)
    return loaded


def test_create_service_clusterip_and_nodeport(kubectl: Kubectl) -> None:
    created = kubectl.run("create", "service", "clusterip", "web", "--tcp=80:8080", "-v=8")
    assert created.stdout.strip() == "service/web created"
    if kubectl.binary.name.endswith(
        "1.33"
    ):  # the POST went as protobuf and the 201 came back as protobuf
        response = created.stderr[created.stderr.index('"Response" status="201 Created"') :]
        assert "Content-Type: application/vnd.kubernetes.protobuf" in response
    # one node port per kubectl version: node ports are unique across the server's namespaces
    node_port = 30000 + int(kubectl.namespace.rsplit("-", 1)[1])
    assert kubectl.run(
        "create", "service", "nodeport", "np", "--tcp=81:8081", f"--node-port={node_port}"
    ).stdout.strip() == ("service/np created")
    web = get_yaml(kubectl, "service", "web")
    assert web["spec"]["type"] == "ClusterIP"
    assert web["spec"]["selector"] == {"app": "web"}
    assert web["spec"]["ports"] == [
        {"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}
    ]
    np = get_yaml(kubectl, "svc", "np")
    assert np["spec"]["type"] == "NodePort"
    assert np["spec"]["ports"][0]["nodePort"] == node_port
    assert np["spec"]["ports"][0]["targetPort"] == 8081
    rows = [line.split()[0] for line in kubectl.run("get", "services").stdout.splitlines()[1:]]
    assert {"web", "np"} <= set(rows)


def test_create_secret_generic_and_tls(kubectl: Kubectl, tls_pair: tuple[Path, Path]) -> None:
    cert, key = tls_pair
    assert kubectl.run(
        "create", "secret", "generic", "creds", "--from-literal=user=admin", "--type=example.com/x"
    ).stdout.strip() == ("secret/creds created")
    assert kubectl.run(
        "create", "secret", "tls", "cert", f"--cert={cert}", f"--key={key}"
    ).stdout.strip() == ("secret/cert created")
    creds = get_yaml(kubectl, "secret", "creds")
    assert creds["type"] == "example.com/x"
    assert base64.b64decode(creds["data"]["user"]) == b"admin"
    tls = get_yaml(kubectl, "secret", "cert")
    assert tls["type"] == "kubernetes.io/tls"
    assert base64.b64decode(tls["data"]["tls.crt"]) == cert.read_bytes()
    assert base64.b64decode(tls["data"]["tls.key"]) == key.read_bytes()


def test_create_configmap_and_namespace(kubectl: Kubectl, tmp_path: Path) -> None:
    blob = tmp_path / "blob"
    blob.write_bytes(bytes(range(256)))
    assert kubectl.run(
        "create", "configmap", "settings", "--from-literal=a=b", f"--from-file=blob={blob}"
    ).stdout.strip() == ("configmap/settings created")
    settings = get_yaml(kubectl, "configmap", "settings")
    assert settings["data"] == {"a": "b"}
    assert base64.b64decode(settings["binaryData"]["blob"]) == bytes(range(256))
    name = f"{kubectl.namespace}-team"
    assert kubectl.run("create", "namespace", name).stdout.strip() == f"namespace/{name} created"
    namespace = get_yaml(kubectl, "namespace", name)
    assert namespace["status"] == {"phase": "Active"}
    assert namespace["metadata"]["name"] == name


def test_describe_and_events_read_protobuf(server: ServerProcess, kubectl: Kubectl) -> None:
    """describe and events use the typed clientset (protobuf from 1.32 on): a Service get and Event lists, and
    `events --watch` a protobuf watch stream."""
    kubectl.run("create", "service", "clusterip", "described", "--tcp=80")
    described = kubectl.run("describe", "service", "described").stdout
    assert "Selector:" in described and "80/TCP" in described
    url = f"/api/v1/namespaces/{kubectl.namespace}/events"

    def event(name: str, message: str) -> dict[str, object]:
        involved = {"kind": "Service", "name": "described", "namespace": kubectl.namespace}
        return {
            "metadata": {"name": name},
            "involvedObject": involved,
            "reason": "Probed",
            "message": message,
            "type": "Normal",
        }

    assert server.http("POST", url, json=event("described.0", "listed first")).status_code == 201
    watcher = kubectl.popen("events", "--watch")
    lines = _Lines(watcher)
    try:
        # the event already there is printed once kubectl lists; it watches from that list on
        lines.wait_for("listed first")
        created = server.http("POST", url, json=event("described.1", "seen by the protobuf watch"))
        assert created.status_code == 201
        line = lines.wait_for("seen by the protobuf watch")
        assert "Probed" in line and "Service/described" in line
    finally:
        watcher.terminate()
        watcher.communicate(timeout=10)
    listed = kubectl.run("events").stdout
    assert "seen by the protobuf watch" in listed


class _Lines:
    """The lines a process prints, read by one thread so that a wait never blocks on a silent process."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        stdout = process.stdout
        self.lines: list[str] = []
        self.added = threading.Condition()

        def read() -> None:
            for line in iter(stdout.readline, ""):
                with self.added:
                    self.lines.append(line)
                    self.added.notify_all()

        threading.Thread(target=read, daemon=True).start()

    def wait_for(self, needle: str, timeout: float = 20) -> str:
        """The first line holding ``needle``, once printed."""
        with self.added:
            found = self.added.wait_for(
                lambda: next((line for line in self.lines if needle in line), None), timeout
            )
        assert found, f"no line with {needle!r} in {self.lines}"
        return found


# --- what a protobuf-speaking client sees ---------------------------------------------------------


def test_objects_and_lists_come_back_as_protobuf(client: httpx.Client) -> None:
    body = {"metadata": {"name": "pb", "labels": {"b": "2", "a": "1"}}, "data": {"k": "v"}}
    assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
    as_json = client.get("/api/v1/namespaces/default/configmaps/pb").json()
    answer = client.get("/api/v1/namespaces/default/configmaps/pb", headers=PROTOBUF_FIRST)
    assert answer.headers["content-type"] == CONTENT_TYPE
    assert decode(answer.content, message("ConfigMap")) == as_json
    listed = client.get(
        "/api/v1/namespaces/default/configmaps?labelSelector=a%3D1", headers=PROTOBUF_FIRST
    )
    assert listed.headers["content-type"] == CONTENT_TYPE
    document = decode(listed.content, message("ConfigMap", listed=True))
    assert (document["kind"], document["apiVersion"]) == ("ConfigMapList", "v1")
    # items of a protobuf list carry no apiVersion/kind (kube's typed lists neither)
    assert document["items"] == [
        {key: value for key, value in as_json.items() if key not in ("apiVersion", "kind")}
    ]
    partial = client.get(
        "/api/v1/namespaces/default/configmaps",
        headers={
            "Accept": "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        },
    )
    names = [
        item["metadata"]["name"]
        for item in decode(partial.content, PARTIAL_OBJECT_METADATA_LIST)["items"]
    ]
    assert "pb" in names


def test_errors_are_protobuf_status_and_custom_resources_stay_json(client: httpx.Client) -> None:
    missing = client.get("/api/v1/namespaces/default/services/nope", headers=PROTOBUF_FIRST)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == CONTENT_TYPE
    assert decode(missing.content, STATUS) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'services "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "kind": "services"},
        "code": 404,
    }
    crontabs = client.get(
        "/apis/stable.example.com/v1/namespaces/default/crontabs", headers=PROTOBUF_FIRST
    )
    assert crontabs.status_code == 200
    assert crontabs.headers["content-type"] == "application/json"
    assert crontabs.json()["kind"] == "CronTabList"
    # a protobuf body for a custom resource is refused as kube's custom resource handler refuses it
    refused = client.post(
        "/apis/stable.example.com/v1/namespaces/default/crontabs",
        content=b"k8s\x00",
        headers={"Content-Type": CONTENT_TYPE},
    )
    assert refused.status_code == 415


def test_protobuf_body_of_another_kind_is_refused_like_json(client: httpx.Client) -> None:
    body = envelope("v1", "Secret", ln(1, ln(1, "wrong")))
    answer = client.post(
        "/api/v1/namespaces/default/configmaps",
        content=body,
        headers={"Content-Type": CONTENT_TYPE},
    )
    assert answer.status_code == 400
    assert "the kind in the data (Secret)" in answer.json()["message"]


def _frames(stream: httpx.Response, until: str) -> Iterator[dict[str, Any]]:
    """The stream's frames, each a 4-byte big-endian length and a metav1.WatchEvent (kube's RawSerializer: no
    envelope) whose object is the enveloped object (kube's embedded encoder), decoded; up to an event of
    type ``until``."""
    buffer = b""
    for chunk in stream.iter_bytes():
        buffer += chunk
        while len(buffer) >= 4 and len(buffer) >= 4 + int.from_bytes(buffer[:4], "big"):
            size = int.from_bytes(buffer[:4], "big")
            event = decode_message(WATCH_EVENT, buffer[4 : 4 + size])
            buffer = buffer[4 + size :]
            unknown = decode_envelope(base64.b64decode(event["object"]["raw"]))
            codec = STATUS if unknown.kind == "Status" else message(unknown.kind)
            obj = {"kind": unknown.kind, **decode_message(codec, unknown.raw)}
            yield {"type": event["type"], "object": obj}
            if event["type"] == until:
                return


def test_watch_streams_protobuf_frames(client: httpx.Client) -> None:
    url = "/api/v1/namespaces/default/secrets?watch=true&timeoutSeconds=5&fieldSelector=metadata.name%3Dw"
    with client.stream("GET", url, headers=PROTOBUF_FIRST) as stream:
        assert stream.headers["content-type"] == "application/vnd.kubernetes.protobuf;stream=watch"
        body = {"metadata": {"name": "w"}, "stringData": {"k": "v"}}
        assert client.post("/api/v1/namespaces/default/secrets", json=body).status_code == 201
        event = next(_frames(stream, "ADDED"))
    assert event["type"] == "ADDED"
    secret = event["object"]
    assert (secret["kind"], secret["metadata"]["name"]) == ("Secret", "w")
    assert secret["data"] == {"k": base64.b64encode(b"v").decode()}
    assert json.dumps(secret)  # plain JSON values throughout


def test_watch_bookmark_ends_the_initial_events_in_protobuf(client: httpx.Client) -> None:
    body = {"metadata": {"name": "initial"}, "data": {"k": "v"}}
    assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
    url = (
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5&sendInitialEvents=true"
        "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
    )
    with client.stream("GET", url, headers=PROTOBUF_FIRST) as stream:
        events = list(_frames(stream, "BOOKMARK"))
    assert "initial" in [e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"]
    bookmark = events[-1]["object"]
    assert bookmark["kind"] == "ConfigMap"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["metadata"]["resourceVersion"]


def test_delete_options_in_protobuf(client: httpx.Client) -> None:
    """client-go's typed clients send DeleteOptions as protobuf (meta/v1 generated.proto: preconditions = 2,
    dryRun = 5); a precondition on another uid is a 409, a dry run deletes nothing."""
    body = {"metadata": {"name": "doomed"}}
    assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
    url = "/api/v1/namespaces/default/configmaps/doomed"
    headers = {"Content-Type": CONTENT_TYPE}
    wrong_uid = envelope("v1", "DeleteOptions", ln(2, ln(1, "not-the-uid")))
    conflict = client.request("DELETE", url, content=wrong_uid, headers=headers)
    assert conflict.status_code == 409, conflict.text
    dry_run = envelope("v1", "DeleteOptions", ln(5, "All"))
    assert client.request("DELETE", url, content=dry_run, headers=headers).status_code == 200
    assert client.get(url).status_code == 200
    assert (
        client.request(
            "DELETE", url, content=envelope("v1", "DeleteOptions", b""), headers=headers
        ).status_code
        == 200
    )
    assert client.get(url).status_code == 404
