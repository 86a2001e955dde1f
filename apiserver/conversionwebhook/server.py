"""The webhook's HTTPS server: POST /convert answers ConversionReviews, GET /healthz says it is up (the
Deployment's probes). A thread per connection: conversions are CPU-bound and short, kube sends one review per
request and keeps connections alive."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

from apiserver.conversionwebhook.review import BadReview, answer
from apiserver.machinery.scheme import Scheme

__all__ = ["CONVERT_PATH", "HEALTH_PATH", "MAX_BODY", "serve"]

CONVERT_PATH = "/convert"
HEALTH_PATH = "/healthz"
MAX_BODY = 64 << 20
"""Requests above this are refused (413): kube's largest review is one list page of objects."""


def _handler(scheme: Scheme) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: one line per review would drown the failures, which are logged."""

        def _send(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _text(self, code: int, message: str) -> None:
            self._send(code, f"{message}\n".encode(), "text/plain; charset=utf-8")

        def do_GET(self) -> None:
            if self.path.partition("?")[0] == HEALTH_PATH:
                self._text(200, "ok")
            else:
                self._text(404, "404 page not found")

        def do_POST(self) -> None:
            if self.path.partition("?")[0] != CONVERT_PATH:
                self._text(404, "404 page not found")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.close_connection = True
                self._text(413, f"request body larger than {MAX_BODY} bytes")
                return
            body = self.rfile.read(length)
            try:
                review = answer(scheme, self.headers.get("Content-Type", ""), body)
            except BadReview as error:
                self._text(400, str(error))
                return
            result = review["response"]["result"]
            if result["status"] != "Success":
                print(f"conversion failed: {result['message']}", file=sys.stderr, flush=True)
            self._send(200, json.dumps(review).encode(), "application/json")

    return Handler


class _TLSServer(ThreadingHTTPServer):
    """TLS handshakes in each connection's thread, so a client that never finishes one blocks only itself."""

    daemon_threads = True
    handshake_timeout = 10.0

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext,
    ) -> None:
        super().__init__(address, handler)
        self.context = context

    def finish_request(self, request: Any, client_address: Any) -> None:
        # headers and body leave in two writes: without this, Nagle's algorithm holds the body until the
        # client's delayed ACK (40 ms per review on Linux)
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request.settimeout(self.handshake_timeout)
        try:
            connection = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        connection.settimeout(None)
        try:
            super().finish_request(connection, client_address)
        finally:
            connection.close()


class StartFailure(Exception):
    """The webhook cannot start, for a reason its operator can act on: the message says which."""


def serve(scheme: Scheme, cert_file: Path, key_file: Path, bind_address: str, port: int) -> None:
    """Serve until SIGTERM or SIGINT (then return); raises StartFailure when the certificate and key cannot
    be loaded or the port is taken."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_file, key_file)
    except OSError as error:  # ssl.SSLError too: not PEM, or a key that does not match
        raise StartFailure(f"cannot load {cert_file} and {key_file}: {error}") from error
    try:
        httpd = _TLSServer((bind_address, port), _handler(scheme), context)
    except OSError as error:  # as Go words it: `bind: address already in use`
        reason = (error.strerror or str(error)).lower()
        raise StartFailure(f"failed to listen on {bind_address}:{port}: bind: {reason}") from error

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    print(f"serving conversion webhook on https://{bind_address}:{port}{CONVERT_PATH}", flush=True)
    try:
        httpd.serve_forever()
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        httpd.server_close()
