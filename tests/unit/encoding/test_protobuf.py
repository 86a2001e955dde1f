"""Tests of apiserver.encoding.protobuf: hand-encoded messages for every supported kind, malformed input, and the
real thing: kubectl 1.32 (protobuf) and kubectl 1.31 (JSON) run the same commands against a capturing
server, and each protobuf body must decode to exactly the JSON body of the older kubectl."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apiserver.encoding.protobuf import (
    CONTENT_TYPE,
    KINDS,
    OBJECT_META,
    ProtobufError,
    UnsupportedKindError,
    decode,
    decode_message,
)
from tests.kubectl import Kubectl, kubectl_binary

# --- a tiny proto2 encoder -----------------------------------------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


def ln(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def vi(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def entries(number: int, mapping: dict[str, bytes | str]) -> bytes:
    return b"".join(ln(number, ln(1, key) + ln(2, value)) for key, value in mapping.items())


def time(seconds: int, nanos: int = 0) -> bytes:
    return vi(1, seconds) + (vi(2, nanos) if nanos else b"")


def envelope(api_version: str, kind: str, raw: bytes, *extra: bytes) -> bytes:
    return b"k8s\x00" + ln(1, ln(1, api_version) + ln(2, kind)) + ln(2, raw) + b"".join(extra)


# --- decoding ------------------------------------------------------------------------------------


def test_object_meta_every_field() -> None:
    owner = ln(5, "v1") + ln(1, "ConfigMap") + ln(3, "owner") + ln(4, "u-1") + vi(6, 1) + vi(7, 0)
    managed = (
        ln(1, "kubectl")
        + ln(2, "Update")
        + ln(3, "v1")
        + ln(4, time(1_700_000_000))
        + ln(6, "FieldsV1")
        + ln(7, ln(1, b'{"f:data":{}}'))
    )
    meta = (
        ln(1, "n")
        + ln(2, "gen-")
        + ln(3, "ns")
        + ln(5, "uid-1")
        + ln(6, "42")
        + vi(7, 3)
        + ln(8, time(0))
        + ln(9, time(86400 * 365))
        + vi(10, 0)
        + entries(11, {"app": "x", "tier": ""})
        + entries(12, {"note": "ä"})
        + ln(13, owner)
        + ln(14, "a/b")
        + ln(14, "c")
        + ln(17, managed)
    )
    assert decode_message(OBJECT_META, meta) == {
        "name": "n",
        "generateName": "gen-",
        "namespace": "ns",
        "uid": "uid-1",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "1970-01-01T00:00:00Z",
        "deletionTimestamp": "1971-01-01T00:00:00Z",
        "deletionGracePeriodSeconds": 0,  # a pointer: printed because it was sent, though zero
        "labels": {"app": "x", "tier": ""},
        "annotations": {"note": "ä"},
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": "owner",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": False,
            }
        ],
        "finalizers": ["a/b", "c"],
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2023-11-14T22:13:20Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {}},
            }
        ],
    }


def test_go_json_rules_for_empty_fields() -> None:
    """go-protobuf writes every non-pointer field; encoding/json drops the omitempty ones, prints a zero
    Time as null and structs as {}. An empty message therefore decodes like Go's JSON of a zero object."""
    wire_of_zero_meta = (
        ln(1, "") + ln(2, "") + ln(3, "") + ln(4, "") + ln(5, "") + vi(7, 0) + ln(8, b"")
    )
    body = envelope("v1", "Namespace", ln(1, wire_of_zero_meta) + ln(2, b"") + ln(3, ln(1, "")))
    assert decode(body) == {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": {},
    }
    # Absent from the wire altogether: the same, since Go starts from the zero object.
    assert decode(envelope("v1", "Namespace", b"")) == decode(body)


def test_namespace() -> None:
    condition = ln(1, "NamespaceDeletionContentFailure") + ln(2, "False") + ln(5, "r")
    raw = (
        ln(1, ln(1, "team"))
        + ln(2, ln(1, "kubernetes"))
        + ln(3, ln(1, "Active") + ln(2, condition))
    )
    assert decode(envelope("v1", "Namespace", raw)) == {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": "team", "creationTimestamp": None},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {
            "phase": "Active",
            "conditions": [
                {
                    "type": "NamespaceDeletionContentFailure",
                    "status": "False",
                    "lastTransitionTime": None,
                    "reason": "r",
                }
            ],
        },
    }


def test_configmap_binary_data_is_base64_and_immutable_false_is_kept() -> None:
    raw = (
        ln(1, ln(1, "cm"))
        + vi(4, 0)
        + entries(2, {"k": "v"})
        + entries(3, {"bin": b"\x00\xff", "empty": b""})
    )
    assert decode(envelope("v1", "ConfigMap", raw)) == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "cm", "creationTimestamp": None},
        "immutable": False,
        "data": {"k": "v"},
        "binaryData": {"bin": "AP8=", "empty": ""},
    }


def test_secret() -> None:
    raw = (
        ln(1, ln(1, "s") + ln(3, "default"))
        + vi(5, 1)
        + entries(2, {"password": b"p\xc3\xa4ss"})
        + entries(4, {"user": "admin"})
        + ln(3, "kubernetes.io/basic-auth")
    )
    assert decode(envelope("v1", "Secret", raw)) == {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "s", "namespace": "default", "creationTimestamp": None},
        "immutable": True,
        "data": {"password": "cMOkc3M="},
        "stringData": {"user": "admin"},
        "type": "kubernetes.io/basic-auth",
    }


def test_event_core_v1() -> None:
    reference = (
        ln(1, "Pod") + ln(2, "default") + ln(3, "web") + ln(4, "u") + ln(5, "v1") + ln(7, "spec")
    )
    raw = (
        ln(1, ln(1, "web.1") + ln(3, "default"))
        + ln(2, reference)
        + ln(3, "Started")
        + ln(4, "started container")
        + ln(5, ln(1, "kubelet") + ln(2, "node-1"))
        + ln(6, time(1_700_000_000))
        + ln(7, time(1_700_000_060, 999_000_000))  # Time drops the fraction
        + vi(8, 2)
        + ln(9, "Normal")
        + ln(10, time(1_700_000_000, 123_456_789))  # MicroTime truncates to microseconds
        + ln(11, vi(1, 5) + ln(2, time(1_700_000_100, 1000)))
        + ln(12, "Start")
        + ln(13, ln(1, "Node") + ln(3, "node-1"))
        + ln(14, "kubelet")
        + ln(15, "kubelet-node-1")
    )
    assert decode(envelope("v1", "Event", raw)) == {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": "web.1", "namespace": "default", "creationTimestamp": None},
        "involvedObject": {
            "kind": "Pod",
            "namespace": "default",
            "name": "web",
            "uid": "u",
            "apiVersion": "v1",
            "fieldPath": "spec",
        },
        "reason": "Started",
        "message": "started container",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2023-11-14T22:13:20Z",
        "lastTimestamp": "2023-11-14T22:14:20Z",
        "count": 2,
        "type": "Normal",
        "eventTime": "2023-11-14T22:13:20.123456Z",
        "series": {"count": 5, "lastObservedTime": "2023-11-14T22:15:00.000001Z"},
        "action": "Start",
        "related": {"kind": "Node", "name": "node-1"},
        "reportingComponent": "kubelet",
        "reportingInstance": "kubelet-node-1",
    }


def test_minimal_event_prints_go_zero_values() -> None:
    assert decode(envelope("v1", "Event", b"")) == {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"creationTimestamp": None},
        "involvedObject": {},
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": None,
        "reportingComponent": "",
        "reportingInstance": "",
    }


def test_self_subject_access_review_with_selectors_and_non_resource() -> None:
    requirement = ln(1, "app") + ln(2, "In") + ln(3, "a") + ln(3, "b")
    attributes = (
        ln(1, "default")
        + ln(2, "list")
        + ln(3, "apps")
        + ln(4, "v1")
        + ln(5, "deployments")
        + ln(6, "scale")
        + ln(7, "web")
        + ln(8, ln(1, "metadata.name=web"))
        + ln(9, ln(2, requirement))
    )
    raw = (
        ln(1, b"") + ln(2, ln(1, attributes) + ln(2, ln(1, "/healthz") + ln(2, "get"))) + ln(3, b"")
    )
    assert decode(envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", raw)) == {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {
            "resourceAttributes": {
                "namespace": "default",
                "verb": "list",
                "group": "apps",
                "version": "v1",
                "resource": "deployments",
                "subresource": "scale",
                "name": "web",
                "fieldSelector": {"rawSelector": "metadata.name=web"},
                "labelSelector": {
                    "requirements": [{"key": "app", "operator": "In", "values": ["a", "b"]}]
                },
            },
            "nonResourceAttributes": {"path": "/healthz", "verb": "get"},
        },
        "status": {"allowed": False},
    }


def test_self_subject_rules_review_and_self_subject_review() -> None:
    rule = ln(1, "get") + ln(2, "") + ln(3, "pods")
    status = ln(1, rule) + ln(2, ln(1, "get") + ln(2, "/healthz")) + vi(3, 1)
    raw = ln(2, ln(1, "kube-system")) + ln(3, status)
    assert decode(envelope("authorization.k8s.io/v1", "SelfSubjectRulesReview", raw)) == {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"namespace": "kube-system"},
        "status": {
            "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
            "incomplete": True,
        },
    }
    user = ln(1, "alice") + ln(3, "devs") + ln(4, ln(1, "scopes") + ln(2, ln(1, "a") + ln(1, "b")))
    for version in ("v1", "v1beta1", "v1alpha1"):
        body = envelope(f"authentication.k8s.io/{version}", "SelfSubjectReview", ln(2, ln(1, user)))
        assert decode(body)["status"] == {
            "userInfo": {"username": "alice", "groups": ["devs"], "extra": {"scopes": ["a", "b"]}}
        }


def test_unknown_fields_of_every_wire_type_are_skipped_and_last_scalar_wins() -> None:
    unknown = (
        vi(99, 7) + varint(98 << 3 | 1) + bytes(8) + varint(97 << 3 | 5) + bytes(4) + ln(96, "x")
    )
    raw = ln(1, ln(1, "first") + unknown + ln(1, "second")) + unknown
    body = envelope("v1", "ConfigMap", raw, ln(3, ""), ln(4, CONTENT_TYPE), ln(9, "future"))
    assert decode(body)["metadata"] == {"name": "second", "creationTimestamp": None}


def test_repeated_message_occurrences_merge() -> None:
    raw = ln(1, ln(1, "cm")) + ln(1, entries(11, {"a": "1"}))
    assert decode(envelope("v1", "ConfigMap", raw))["metadata"] == {
        "name": "cm",
        "creationTimestamp": None,
        "labels": {"a": "1"},
    }


def test_negative_integers_are_twos_complement() -> None:
    meta = vi(7, -5) + vi(10, -1)
    assert decode_message(OBJECT_META, meta) == {
        "generation": -5,
        "deletionGracePeriodSeconds": -1,
        "creationTimestamp": None,
    }
    event = decode(envelope("v1", "Event", vi(8, -2)))
    assert event["count"] == -2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "magic"),
        (b"{}", "magic"),
        (b"k8s\x00\x0a", "truncated varint"),
        (b"k8s\x00\x12\x05ab", "runs past the end"),
        (b"k8s\x00" + b"\xff" * 11, "longer than 10 bytes"),
        (b"k8s\x00\x0b", "wire type 3"),
        (b"k8s\x00\x00", "field number 0"),
        (b"k8s\x00\x09\x01\x02", "truncated fixed-width"),
        (envelope("v1", "ConfigMap", vi(1, 1)), "ConfigMap.metadata"),
        (envelope("v1", "ConfigMap", ln(1, vi(1, 3))), "ObjectMeta.name"),
        (envelope("v1", "ConfigMap", ln(1, ln(1, b"\xff"))), "UTF-8"),
        (envelope("v1", "ConfigMap", vi(2, 1)), "map entry"),
        (envelope("v1", "ConfigMap", ln(1, ln(8, vi(1, 10**15)))), "out of range"),
        (envelope("v1", "ConfigMap", ln(1, ln(17, ln(7, ln(1, "{"))))), "not JSON"),
    ],
)
def test_malformed_bodies(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message) as raised:
        decode(body)
    assert not isinstance(raised.value, UnsupportedKindError)


@pytest.mark.parametrize(
    "body",
    [
        envelope("v1", "Pod", b""),
        envelope("apps/v1", "Namespace", b""),
        envelope("v1", "ConfigMap", b"", ln(3, "gzip")),
        envelope("v1", "ConfigMap", b"", ln(4, "application/json")),
        b"k8s\x00",
    ],
)
def test_unsupported_kinds_and_encodings(body: bytes) -> None:
    with pytest.raises(UnsupportedKindError):
        decode(body)


def test_every_kind_has_metadata_first() -> None:
    for message in KINDS.values():
        assert message.fields[0].name == "metadata"


@given(
    labels=st.dictionaries(st.text(), st.text(), max_size=5),
    generation=st.integers(-(2**63), 2**63 - 1),
    seconds=st.integers(-62135596800, 253402300799),
)
def test_roundtrip_property(labels: dict[str, str], generation: int, seconds: int) -> None:
    meta = entries(11, dict(labels)) + vi(7, generation) + ln(8, time(seconds))
    decoded = decode_message(OBJECT_META, meta)
    assert decoded.get("labels", {}) == labels
    assert decoded.get("generation", 0) == generation
    assert len(decoded["creationTimestamp"]) == len("2006-01-02T15:04:05Z")


# --- real kubectl --------------------------------------------------------------------------------

DISCOVERY_V1 = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        {
            "name": plural,
            "singularName": kind.lower(),
            "namespaced": ns,
            "kind": kind,
            "verbs": verbs,
        }
        for plural, kind, ns in [
            ("namespaces", "Namespace", False),
            ("configmaps", "ConfigMap", True),
            ("secrets", "Secret", True),
            ("pods", "Pod", True),
        ]
        for verbs in [["create", "get", "list"]]
    ],
}
STATUS_REPLIES = {
    "SelfSubjectAccessReview": {"allowed": True},
    "SelfSubjectRulesReview": {
        "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
        "nonResourceRules": [],
        "incomplete": False,
    },
    "SelfSubjectReview": {"userInfo": {"username": "alice"}},
}


@dataclass
class Capture:
    """Bodies POSTed to the capturing server, each as (Content-Type, body)."""

    bodies: list[tuple[str, bytes]] = field(default_factory=list)


class CapturingHandler(BaseHTTPRequestHandler):
    """Serves just enough discovery for the commands, records each POST and answers 201 with the object
    (decoded here when it is protobuf), so kubectl finishes as against a real server."""

    protocol_version = "HTTP/1.1"
    capture: Capture

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, code: int, document: Any) -> None:
        body = json.dumps(document).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        documents: dict[str, Any] = {
            "/api": {"kind": "APIVersions", "versions": ["v1"]},
            "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
            "/api/v1": DISCOVERY_V1,
        }
        if path in documents:
            self._reply(200, documents[path])
        else:
            self._reply(404, {"kind": "Status", "apiVersion": "v1", "code": 404})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        content_type = self.headers.get("Content-Type", "")
        self.capture.bodies.append((content_type, body))
        try:
            obj = decode(body) if content_type == CONTENT_TYPE else json.loads(body)
        except ProtobufError as error:
            self._reply(
                400, {"kind": "Status", "apiVersion": "v1", "code": 400, "message": str(error)}
            )
            return
        if obj["kind"] in STATUS_REPLIES:
            obj["status"] = STATUS_REPLIES[obj["kind"]]
        self._reply(201, obj)


@pytest.fixture(scope="module")
def capturing_server() -> Iterator[tuple[str, Capture]]:
    capture = Capture()
    handler = type("Handler", (CapturingHandler,), {"capture": capture})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", capture
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def _kubectl(minor: int, url: str, directory: Path) -> Kubectl:
    try:
        binary = kubectl_binary(minor)
    except FileNotFoundError as missing:
        pytest.skip(f"kubectl 1.{minor} is not installed: {missing}")
    directory.mkdir(parents=True, exist_ok=True)
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: '{url}'}}}}]\n"
        "users: [{name: u, user: {}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]\n"
        "current-context: x\n"
    )
    return Kubectl(binary, kubeconfig, directory / "cache")


BLOB = bytes(range(256))  # not UTF-8: a configmap puts it in binaryData
COMMANDS = [
    (("create", "namespace", "ns1"), "namespace/ns1 created"),
    (("create", "namespace", "ns2", "--save-config"), "namespace/ns2 created"),
    (("create", "configmap", "cm", "--from-literal=a=b", "--from-file=blob={blob}"), "cm created"),
    (("create", "configmap", "cm2", "--from-literal=k=v", "--append-hash"), "configmap/cm2-"),
    (
        ("create", "secret", "generic", "s", "--from-literal=a=b", "--from-file=blob={blob}"),
        "secret/s created",
    ),
    (("create", "secret", "generic", "t", "--type=example.com/t", "-n", "other"), "secret/t"),
    (
        (
            "create",
            "secret",
            "docker-registry",
            "d",
            "--docker-server=registry.example.com",
            "--docker-username=u",
            "--docker-password=p",
        ),
        "secret/d created",
    ),
    (("auth", "can-i", "create", "pods"), "yes"),
    (("auth", "can-i", "get", "pods/web", "--subresource=log", "-n", "kube-system"), "yes"),
    (("auth", "can-i", "list", "configmaps", "--all-namespaces"), "yes"),
    (("auth", "can-i", "get", "/logs/"), "yes"),
    (("auth", "can-i", "--list", "-n", "kube-system"), "pods"),
    (("auth", "whoami"), "alice"),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("args", "expected"), COMMANDS, ids=lambda v: " ".join(v)[:60])
def test_kubectl_132_protobuf_decodes_to_kubectl_131_json(
    capturing_server: tuple[str, Capture],
    tmp_path: Path,
    args: tuple[str, ...],
    expected: str,
) -> None:
    url, capture = capturing_server
    (tmp_path / "blob").write_bytes(BLOB)
    argv = [arg.format(blob=tmp_path / "blob") for arg in args]
    bodies: dict[int, tuple[str, bytes]] = {}
    for minor in (31, 32):
        kubectl = _kubectl(minor, url, tmp_path / f"1.{minor}")
        capture.bodies.clear()
        result = kubectl.run(*argv, timeout=30)
        assert expected in result.stdout
        assert len(capture.bodies) == 1, capture.bodies
        bodies[minor] = capture.bodies[0]
    (json_type, json_body), (proto_type, proto_body) = bodies[31], bodies[32]
    assert json_type == "application/json"
    assert proto_type == CONTENT_TYPE
    assert decode(proto_body) == json.loads(json_body)
