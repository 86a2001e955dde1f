"""A small admission webhook over TLS for tests: a thread serving AdmissionReview POSTs, answering by path
(``/allow``, ``/deny``, ``/patch``, ``/garbage``, ``/hang``, ``/badpatch``...), with its own CA (the
``caBundle`` a configuration names) and a record of every review it was sent."""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from apiserver.server.pki import bootstrap, serving_names

Answer = Callable[[dict[str, Any]], Any]
"""The request of a review → the response object (uid and allowed filled in when missing), or bytes sent
as they are."""


def patch_answer(operations: list[dict[str, Any]]) -> Answer:
    encoded = base64.b64encode(json.dumps(operations).encode()).decode()
    return lambda request: {"allowed": True, "patchType": "JSONPatch", "patch": encoded}


ANSWERS: dict[str, Answer] = {
    "/allow": lambda request: {"allowed": True},
    "/deny": lambda request: {
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": "no crontabs on mondays"},
    },
    "/deny-silent": lambda request: {"allowed": False},
    "/warn": lambda request: {
        "allowed": True,
        "warnings": ["think twice"],
        "auditAnnotations": {"checked": "yes"},
    },
    "/patch": patch_answer(
        [{"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}]
    ),
    "/patch-invalid": patch_answer([{"op": "replace", "path": "/spec/replicas", "value": "many"}]),
    "/badpatch": lambda request: {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": "!!notbase64",
    },
    "/garbage": lambda request: b"this is not json",
    "/wronguid": lambda request: {"uid": "someone-else", "allowed": True},
}


class WebhookServer:
    def __init__(
        self, directory: Path, host: str = "127.0.0.1", names: tuple[str, ...] = ()
    ) -> None:
        """Listening on ``host``, with a certificate for ``names`` and the loopback names (``host`` is among
        them only if named: a Service's cluster IP is not what a webhook's certificate carries)."""
        pki = bootstrap(directory, serving_names("0.0.0.0", names))
        assert pki.serving is not None
        self.ca_bundle = base64.b64encode(pki.ca.certificate_pem()).decode()
        self.reviews: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        """Each request's Authorization header (None when it had none)."""
        self.answers = dict(ANSWERS)
        self.hang = threading.Event()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(pki.serving_cert_file, pki.serving_key_file)
        self.httpd = ThreadingHTTPServer((host, 0), self._handler())
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                review = json.loads(body)
                server.reviews.append(review)
                server.authorizations.append(self.headers.get("Authorization"))
                path = self.path.partition("?")[0]
                if path == "/hang":
                    server.hang.wait(35)
                    return
                answer = server.answers[path](review["request"])
                if isinstance(answer, bytes):
                    payload = answer
                else:
                    response = {"uid": review["request"]["uid"], **answer}
                    payload = json.dumps(
                        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                         "response": response}
                    ).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@contextmanager
def webhook_server(
    directory: Path, host: str = "127.0.0.1", names: tuple[str, ...] = ()
) -> Iterator[WebhookServer]:
    server = WebhookServer(directory, host, names)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.hang.set()
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(5)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``condition`` every 20 ms (the plugins learn of a new configuration through a watch)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)
