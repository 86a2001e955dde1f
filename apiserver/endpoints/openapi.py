"""OpenAPI v3 serving: the /openapi/v3 index with content hashes, and each group-version document.

kubectl fetches `/openapi/v3`, then each document by its `?hash=` URL, and keeps hashed URLs in its HTTP cache;
so a document is served with `Cache-Control: public, immutable` and an `Etag`, and its hash changes whenever it
changes (API-CONVENTIONS.md §4.1).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import orjson


@dataclass(frozen=True, slots=True)
class OpenAPIDocument:
    body: bytes
    hash: str


class OpenAPIDocuments:
    """The generated documents (``generated/openapi/*.json``), keyed by path (``apis/<g>/<v>``, ``api/v1``)."""

    def __init__(self, directory: Path) -> None:
        self.documents: dict[str, OpenAPIDocument] = {}
        for file in sorted(directory.glob("*.json")):
            if file.stem == "aggregate":
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

    def document(self, path: str) -> OpenAPIDocument | None:
        return self.documents.get(path.strip("/"))
