"""Tests of the generated protobuf codecs (generated/<group>/<version>/protobuf.py, from the numbers the
definitions declare): hand-encoded messages of every kind, and the real thing:
kubectl 1.32 and 1.33 (protobuf) and kubectl 1.31 (JSON) run the same commands against a capturing server, each
protobuf body must decode to exactly the JSON body of the older kubectl, and encoding the decoded object must
give back kubectl's bytes (kube's own encoding of those objects: the byte-exact fixture)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from apiserver.encoding.protobuf import (
    CONTENT_TYPE,
    Message,
    ProtobufError,
    decode_envelope,
    decode_message,
    encode,
)
from generated.server import build_scheme
from tests.protobufwire import entries, envelope, ln, time, vi
from tests.stubserver import kubectl_for, serving


def _codecs() -> dict[tuple[str, str], Message]:
    """Every kind's message by (apiVersion, kind), as the server's Scheme registers them."""
    found = {}
    for resource in build_scheme():
        for version in resource.versions:
            if version.protobuf is not None:
                found[(resource.api_version(version.name), resource.kind)] = (
                    version.protobuf.message
                )
    return found


CODECS = _codecs()


def decode(body: bytes) -> dict[str, Any]:
    """A body decoded by the message its envelope names (as the server dispatches through its Scheme)."""
    unknown = decode_envelope(body)
    message = CODECS[(unknown.api_version, unknown.kind)]
    return {
        "kind": unknown.kind,
        "apiVersion": unknown.api_version,
        **decode_message(message, unknown.raw),
    }


def test_every_builtin_kind_has_a_codec() -> None:
    assert {kind for _, kind in CODECS} >= {
        "ConfigMap",
        "Event",
        "Namespace",
        "Secret",
        "Service",
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
        "SelfSubjectReview",
        "TokenReview",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "SubjectAccessReview",
        "LocalSubjectAccessReview",
    }


def test_service() -> None:
    port = (
        ln(1, "http")
        + ln(2, "TCP")
        + vi(3, 80)
        + ln(4, vi(1, 0) + vi(2, 8080) + ln(3, ""))
        + vi(5, 0)
    )
    named = ln(2, "UDP") + ln(6, "dns") + vi(3, 53) + ln(4, vi(1, 1) + ln(3, "dns"))
    spec = (
        ln(1, port)
        + ln(1, named)
        + entries(2, {"app": "web"})
        + ln(3, "")
        + ln(4, "NodePort")
        + ln(7, "")
        + vi(12, 0)
        + vi(13, 0)
        + ln(14, ln(1, vi(1, 30)))
        + ln(17, "SingleStack")
        + vi(20, 0)
    )
    status = ln(1, ln(1, ln(1, "10.0.0.1") + ln(4, vi(1, 80) + ln(2, "TCP"))))
    raw = ln(1, ln(1, "web")) + ln(2, spec) + ln(3, status)
    assert decode(envelope("v1", "Service", raw)) == {
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": {"name": "web", "creationTimestamp": None},
        "spec": {
            "ports": [
                {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
                {"protocol": "UDP", "appProtocol": "dns", "port": 53, "targetPort": "dns"},
            ],
            "selector": {"app": "web"},
            "type": "NodePort",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 30}},
            "ipFamilyPolicy": "SingleStack",
            "allocateLoadBalancerNodePorts": False,  # a *bool: false is kept
        },
        "status": {
            "loadBalancer": {
                "ingress": [{"ip": "10.0.0.1", "ports": [{"port": 80, "protocol": "TCP"}]}]
            }
        },
    }


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
            "conditions": [  # NamespaceCondition's json tags: an empty message is omitted
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
    for version in ("v1",):  # the server serves v1 only; kubectl whoami tries it first
        body = envelope(f"authentication.k8s.io/{version}", "SelfSubjectReview", ln(2, ln(1, user)))
        assert decode(body)["status"] == {
            "userInfo": {"username": "alice", "groups": ["devs"], "extra": {"scopes": ["a", "b"]}}
        }


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
            ("services", "Service", True),
            ("pods", "Pod", True),
        ]
        for verbs in [["create", "get", "list"]]
    ],
}
RBAC_V1 = "rbac.authorization.k8s.io/v1"
DISCOVERY_RBAC = {
    "kind": "APIResourceList",
    "groupVersion": RBAC_V1,
    "resources": [
        {
            "name": kind.lower() + "s",
            "singularName": kind.lower(),
            "namespaced": kind in ("Role", "RoleBinding"),
            "kind": kind,
            "verbs": ["create", "get", "list"],
        }
        for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
    ],
}
GROUPS = {
    "kind": "APIGroupList",
    "apiVersion": "v1",
    "groups": [
        {
            "name": "rbac.authorization.k8s.io",
            "versions": [{"groupVersion": RBAC_V1, "version": "v1"}],
            "preferredVersion": {"groupVersion": RBAC_V1, "version": "v1"},
        }
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
            "/apis": GROUPS,
            "/api/v1": DISCOVERY_V1,
            f"/apis/{RBAC_V1}": DISCOVERY_RBAC,
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
    with serving(handler) as url:
        yield url, capture


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
    (("create", "service", "clusterip", "web", "--tcp=80:8080", "--tcp=53:5353"), "service/web"),
    (("create", "service", "clusterip", "headless", "--clusterip=None"), "service/headless"),
    (("create", "service", "nodeport", "np", "--tcp=81:8081", "--node-port=30081"), "service/np"),
    (("create", "service", "externalname", "ext", "--external-name=example.com"), "service/ext"),
    (("create", "secret", "tls", "tls", "--cert={cert}", "--key={key}"), "secret/tls created"),
    (("auth", "can-i", "create", "pods"), "yes"),
    (("auth", "can-i", "get", "pods/web", "--subresource=log", "-n", "kube-system"), "yes"),
    (("auth", "can-i", "list", "configmaps", "--all-namespaces"), "yes"),
    (("auth", "can-i", "get", "/logs/"), "yes"),
    (("auth", "can-i", "--list", "-n", "kube-system"), "pods"),
    (("auth", "whoami"), "alice"),
    (("create", "role", "r", "--verb=get,list", "--resource=pods,pods/log"), "role.rbac"),
    (("create", "role", "named", "--verb=get", "--resource=secrets", "--resource-name=a"), "role."),
    (("create", "clusterrole", "c", "--verb=get", "--non-resource-url=/logs/*"), "clusterrole."),
    (("create", "clusterrole", "agg", "--aggregation-rule=a=b,c=d"), "clusterrole."),
    (
        (
            "create",
            "rolebinding",
            "rb",
            "--clusterrole=view",
            "--user=u",
            "--group=g",
            "--serviceaccount=ns:sa",
        ),
        "rolebinding.",
    ),
    (("create", "clusterrolebinding", "crb", "--clusterrole=x", "--user=u"), "clusterrolebinding."),
]


@pytest.fixture(scope="module")
def tls_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate and its key, for `create secret tls`."""
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "tls.crt", directory / "tls.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=web",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("args", "expected"), COMMANDS, ids=[" ".join(args)[:60] for args, _ in COMMANDS]
)
def test_kubectl_protobuf_decodes_to_kubectl_131_json_and_encodes_back_to_kubectls_bytes(
    capturing_server: tuple[str, Capture],
    tmp_path: Path,
    tls_pair: tuple[Path, Path],
    args: tuple[str, ...],
    expected: str,
) -> None:
    url, capture = capturing_server
    (tmp_path / "blob").write_bytes(BLOB)
    cert, key = tls_pair
    argv = [arg.format(blob=tmp_path / "blob", cert=cert, key=key) for arg in args]
    bodies: dict[int, tuple[str, bytes]] = {}
    for minor in (31, 32, 33):
        kubectl = kubectl_for(minor, url, tmp_path / f"1.{minor}")
        capture.bodies.clear()
        result = kubectl.run(*argv, timeout=30)
        assert expected in result.stdout
        assert len(capture.bodies) == 1, capture.bodies
        bodies[minor] = capture.bodies[0]
    json_type, json_body = bodies[31]
    assert json_type == "application/json"
    for minor in (32, 33):
        proto_type, proto_body = bodies[minor]
        assert proto_type == CONTENT_TYPE
        decoded = decode(proto_body)
        assert decoded == json.loads(json_body)
        # Go's bytes of the object, re-made from its JSON form: the codec writes what kube writes
        assert encode(decoded, CODECS[(decoded["apiVersion"], decoded["kind"])]) == proto_body
