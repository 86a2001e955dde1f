"""OpenAPI serving: the /openapi/v3 index with content hashes, each group-version document, and /openapi/v2
(Swagger 2.0, as gnostic protobuf for kubectl 1.27/1.28, which validate create/apply against it).

kubectl fetches `/openapi/v3`, then each document by its `?hash=` URL, and keeps hashed URLs in its HTTP cache;
so a document is served with `Cache-Control: public, immutable` and an `Etag`, and its hash changes whenever it
changes (API-CONVENTIONS.md §4.1).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import orjson

from apiserver.encoding.gnostic import CONTENT_TYPE, encode_swagger


@dataclass(frozen=True, slots=True)
class OpenAPIDocument:
    body: bytes
    hash: str


class OpenAPIDocuments:
    """The generated documents (``generated/openapi/*.json``), keyed by path (``apis/<g>/<v>``, ``api/v1``)."""

    def __init__(self, directory: Path) -> None:
        self.documents: dict[str, OpenAPIDocument] = {}
        for file in sorted(directory.glob("*.json")):
            if file.stem in ("aggregate", "swagger"):
                continue
            body = orjson.dumps(orjson.loads(file.read_bytes()))
            digest = hashlib.sha512(body).hexdigest()[:128].upper()
            self.documents[file.stem.replace("__", "/")] = OpenAPIDocument(body, digest)
        self.index = orjson.dumps(
            {
                "paths": {
                    path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={document.hash}"}
                    for path, document in sorted(self.documents.items())
                }
            }
        )

        swagger = directory / "swagger.json"
        self.v2_json: OpenAPIDocument | None = None
        self.v2_protobuf: OpenAPIDocument | None = None
        if swagger.exists():
            document = orjson.loads(swagger.read_bytes())
            body = orjson.dumps(document)
            self.v2_json = OpenAPIDocument(body, hashlib.sha512(body).hexdigest()[:128].upper())
            encoded = encode_swagger(document)
            self.v2_protobuf = OpenAPIDocument(
                encoded, hashlib.sha512(encoded).hexdigest()[:128].upper()
            )

    def document(self, path: str) -> OpenAPIDocument | None:
        return self.documents.get(path.strip("/"))

    def v2(self, accept: str) -> tuple[OpenAPIDocument, bytes] | None:
        """/openapi/v2 as gnostic protobuf when asked (kubectl parses only that), JSON otherwise."""
        if "protobuf" in accept and self.v2_protobuf is not None:
            return self.v2_protobuf, CONTENT_TYPE.encode()
        if self.v2_json is not None:
            return self.v2_json, b"application/json"
        return None
