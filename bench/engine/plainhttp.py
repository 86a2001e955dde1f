"""One-off HTTP requests over a fresh connection, for setup and checks (the load goes through bench.loadgen)."""

from __future__ import annotations

import socket

import orjson


def http(port: int, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    """One request over a fresh connection: (status, body)."""
    head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n"
    if body:
        head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        chunks = []
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
    response = b"".join(chunks)
    head_bytes, _, payload = response.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head_bytes.lower():
        raise RuntimeError(f"unexpected chunked answer to {method} {path}")
    return int(head_bytes[9:12]), payload


def ensure_namespace(port: int, name: str) -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    status, answer = http(port, "POST", "/api/v1/namespaces", body)
    if status not in (201, 409):
        raise RuntimeError(f"creating namespace {name}: {status} {answer[:300]!r}")
