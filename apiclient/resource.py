"""A typed client for one kind: what a generated ``client.py`` binds a model to. Every call takes and returns
the kind's pydantic model (or the wire dictionary where a patch is partial); lists page through continue
tokens; a watch yields typed events and bookmarks."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import orjson
from pydantic import BaseModel

from apiclient.connection import Connection
from apiclient.errors import status_error

T = TypeVar("T", bound=BaseModel)

PatchType = Literal["json", "merge", "strategic"]
PATCH_CONTENT_TYPES: dict[str, str] = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}


@dataclass(frozen=True)
class Kind(Generic[T]):
    """Where a kind is served and the model of its objects."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    model: type[T]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str = "", subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        path = f"{base}/{self.plural}"
        if name:
            path += f"/{name}"
        if subresource:
            path += f"/{subresource}"
        return path


@dataclass(frozen=True)
class WatchEvent(Generic[T]):
    """One event of a watch: ADDED, MODIFIED, DELETED, or BOOKMARK (whose object carries only its
    resourceVersion)."""

    type: str
    object: T
    resource_version: str


class Resource(Generic[T]):
    """The verbs of one kind over a connection."""

    def __init__(self, connection: Connection, kind: Kind[T]) -> None:
        self.connection = connection
        self.kind = kind

    def get(self, name: str, namespace: str | None = None) -> T:
        return self._decode(self.connection.request("GET", self.kind.path(namespace, name)))

    def list(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[T]:
        """Every object, page after page of ``limit`` (kube's continue tokens) when a limit is given."""
        return list(
            self.iterate(
                namespace, label_selector=label_selector, field_selector=field_selector, limit=limit
            )
        )

    def iterate(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
    ) -> Iterator[T]:
        """The objects one page at a time, following ``metadata.continue``."""
        params: dict[str, Any] = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "limit": limit,
        }
        while True:
            page = orjson.loads(self.connection.request("GET", self.kind.path(namespace), params))
            for item in page.get("items") or ():
                item.setdefault("apiVersion", self.kind.api_version)
                item.setdefault("kind", self.kind.kind)
                yield self.kind.model.model_validate(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            params["continue"] = token

    def create(
        self,
        obj: T,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        path = self.kind.path(namespace or _namespace(obj))
        body = self._encode(obj)
        params = {"dryRun": "All" if dry_run else None, "fieldManager": field_manager}
        return self._decode(self.connection.request("POST", path, params, body))

    def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """PUT the object (conditioned on its resourceVersion, if it has one)."""
        return self._put(obj, "", dry_run, field_manager)

    def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """PUT the object's status subresource."""
        return self._put(obj, "status", dry_run, field_manager)

    def patch(
        self,
        name: str,
        patch: dict[str, Any] | builtins.list[dict[str, Any]],
        namespace: str | None = None,
        *,
        type: PatchType = "merge",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        """A JSON patch (a list of operations), a merge patch, or a strategic merge patch (where the kind
        serves it)."""
        path = self.kind.path(namespace, name, subresource)
        params = {"dryRun": "All" if dry_run else None, "fieldManager": field_manager}
        return self._decode(
            self.connection.request(
                "PATCH", path, params, orjson.dumps(patch), PATCH_CONTENT_TYPES[type]
            )
        )

    def apply(
        self,
        obj: T | dict[str, Any],
        *,
        field_manager: str,
        namespace: str | None = None,
        force: bool = False,
        dry_run: bool = False,
    ) -> T:
        """Server-side apply of what ``field_manager`` wants the object to hold."""
        wire = obj if isinstance(obj, dict) else obj.model_dump(mode="json", exclude_unset=True)
        wire = {"apiVersion": self.kind.api_version, "kind": self.kind.kind, **wire}
        metadata = wire.get("metadata") or {}
        path = self.kind.path(namespace or metadata.get("namespace"), metadata.get("name", ""))
        params = {
            "fieldManager": field_manager,
            "force": True if force else None,
            "dryRun": "All" if dry_run else None,
        }
        body = orjson.dumps(wire)
        return self._decode(
            self.connection.request("PATCH", path, params, body, "application/apply-patch+yaml")
        )

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: dict[str, str] | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete (with ``Background``, ``Foreground`` or ``Orphan`` propagation, and uid or
        resourceVersion preconditions)."""
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = preconditions
        if dry_run:
            options["dryRun"] = ["All"]
        self.connection.request(
            "DELETE", self.kind.path(namespace, name), None, orjson.dumps(options)
        )

    def delete_collection(
        self, namespace: str | None = None, *, label_selector: str | None = None
    ) -> None:
        self.connection.request(
            "DELETE", self.kind.path(namespace), {"labelSelector": label_selector}
        )

    def watch(
        self,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        bookmarks: bool = True,
    ) -> Iterator[WatchEvent[T]]:
        """The events after ``resource_version`` (or the current objects as ADDED first, without one) until
        the server ends the watch; an ERROR event (410 Expired after a compaction) raises its Status."""
        params = {
            "watch": True,
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": True if bookmarks else None,
        }
        with self.connection.stream(self.kind.path(namespace), params) as lines:
            for line in lines:
                event = orjson.loads(line)
                raw = event.get("object") or {}
                if event.get("type") == "ERROR":
                    raise status_error(int(raw.get("code") or 500), orjson.dumps(raw))
                version = str((raw.get("metadata") or {}).get("resourceVersion") or "")
                yield WatchEvent(event["type"], self.kind.model.model_validate(raw), version)

    def _put(self, obj: T, subresource: str, dry_run: bool, field_manager: str | None) -> T:
        metadata = getattr(obj, "metadata", None)
        name = getattr(metadata, "name", None) or ""
        path = self.kind.path(_namespace(obj), name, subresource)
        params = {"dryRun": "All" if dry_run else None, "fieldManager": field_manager}
        return self._decode(self.connection.request("PUT", path, params, self._encode(obj)))

    def _encode(self, obj: T) -> bytes:
        wire = obj.model_dump(mode="json", exclude_unset=True)
        wire.setdefault("apiVersion", self.kind.api_version)
        wire.setdefault("kind", self.kind.kind)
        return orjson.dumps(wire)

    def _decode(self, body: bytes) -> T:
        return self.kind.model.model_validate_json(body)


def _namespace(obj: BaseModel) -> str | None:
    metadata = getattr(obj, "metadata", None)
    namespace = getattr(metadata, "namespace", None)
    return str(namespace) if namespace else None
