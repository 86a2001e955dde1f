"""OpenAPI serving: the /openapi/v3 index with content hashes, each group-version document, and /openapi/v2
(Swagger 2.0, as gnostic protobuf for kubectl 1.27/1.28, which validate create/apply against it).

kubectl fetches `/openapi/v3`, then each document by its `?hash=` URL, and keeps hashed URLs in its HTTP cache;
so a document is served with `Cache-Control: public, immutable` and an `Etag`, and its hash changes whenever it
changes (API-CONVENTIONS.md §4.1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from apiserver.encoding.gnostic import CONTENT_TYPE, encode_swagger


@dataclass(frozen=True, slots=True)
class OpenAPIDocument:
    body: bytes
    hash: str


def _document(body: bytes) -> OpenAPIDocument:
    return OpenAPIDocument(body, hashlib.sha512(body).hexdigest()[:128].upper())


def _merged_v3(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Documents of one group-version from several owners (generated kinds, CRDs of the same group) as
    one: their paths and component schemas joined, the later owner's entry winning."""
    merged: dict[str, Any] = dict(documents[0])
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for document in documents:
        paths.update(document.get("paths", {}))
        schemas.update(document.get("components", {}).get("schemas", {}))
    merged["paths"] = dict(sorted(paths.items()))
    merged["components"] = {
        **merged.get("components", {}),
        "schemas": dict(sorted(schemas.items())),
    }
    return merged


@cache
def _generated_documents(
    directory: Path, _written: int
) -> tuple[Mapping[str, bytes], Mapping[str, Any] | None, Mapping[str, OpenAPIDocument]]:
    """The generated v3 documents (compact JSON, by path) and swagger.json, read once per process and
    directory as last written (generation replaces files atomically, which changes the directory's mtime):
    they never change while serving (what does is published over them), and a process that builds many
    servers (the test fixtures, a server per test) would read 15 files for each."""
    base: dict[str, bytes] = {}
    for file in sorted(directory.glob("*.json")):
        if file.stem in ("aggregate", "swagger"):
            continue
        base[file.stem.replace("__", "/")] = orjson.dumps(orjson.loads(file.read_bytes()))
    swagger = directory / "swagger.json"
    v2 = MappingProxyType(orjson.loads(swagger.read_bytes())) if swagger.exists() else None
    documents = {path: _document(body) for path, body in base.items()}
    return MappingProxyType(base), v2, MappingProxyType(documents)


class OpenAPIDocuments:
    """The generated documents (``generated/openapi/*.json``), keyed by path (``apis/<g>/<v>``, ``api/v1``),
    and those published while serving (``publish``: CustomResourceDefinitions), merged per path."""

    def __init__(self, directory: Path) -> None:
        written = directory.stat().st_mtime_ns if directory.is_dir() else 0
        self._base, self._base_v2, documents = _generated_documents(directory, written)
        self._published: dict[str, tuple[dict[str, dict[str, Any]], dict[str, Any]]] = {}
        self.documents: dict[str, OpenAPIDocument] = dict(documents)
        self.index = b""
        self._v2: dict[str, OpenAPIDocument] = {}  # encoded when first asked for
        self._reindex()

    def publish(self, owner: str, v3: Mapping[str, dict[str, Any]], v2: Mapping[str, Any]) -> None:
        """Replace ``owner``'s documents (none: withdraw them); hashes change where documents do, and only
        the documents of the paths the owner had or has are built again."""
        before = self._published.pop(owner, ({}, {}))[0]
        if v3 or v2:
            self._published[owner] = (dict(v3), dict(v2))
        for path in {*before, *v3}:
            self._rebuild(path)
        self._reindex()

    def _rebuild(self, path: str) -> None:
        published = [v3[path] for v3, _ in self._published.values() if path in v3]
        if not published:
            if path in self._base:
                self.documents[path] = _document(self._base[path])
            else:
                self.documents.pop(path, None)
            return
        base = [orjson.loads(self._base[path])] if path in self._base else []
        self.documents[path] = _document(orjson.dumps(_merged_v3([*base, *published])))

    def _reindex(self) -> None:
        self.documents = dict(sorted(self.documents.items()))
        self.index = orjson.dumps(
            {
                "paths": {
                    path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={document.hash}"}
                    for path, document in self.documents.items()
                }
            }
        )
        self._v2 = {}

    def _swagger(self) -> dict[str, Any] | None:
        if self._base_v2 is None and not self._published:
            return None
        swagger: dict[str, Any] = dict(self._base_v2 or {"swagger": "2.0", "info": {}})
        for _, v2 in self._published.values():
            for key in ("paths", "definitions"):
                swagger[key] = dict(sorted({**swagger.get(key, {}), **v2.get(key, {})}.items()))
        return swagger

    def document(self, path: str) -> OpenAPIDocument | None:
        return self.documents.get(path.strip("/"))

    def v2(self, accept: str) -> tuple[OpenAPIDocument, bytes] | None:
        """/openapi/v2 as gnostic protobuf when asked (kubectl parses only that), JSON otherwise."""
        form = "protobuf" if "protobuf" in accept else "json"
        if form not in self._v2:
            swagger = self._swagger()
            if swagger is None:
                return None
            self._v2[form] = _document(
                encode_swagger(swagger) if form == "protobuf" else orjson.dumps(swagger)
            )
        content_type = CONTENT_TYPE.encode() if form == "protobuf" else b"application/json"
        return self._v2[form], content_type
