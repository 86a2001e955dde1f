"""What each verb of a kind sends and how its answer reads, apart from any transport: the sync
``Resource`` and the async ``AsyncResource`` both describe a call here and only send it themselves."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Generic, Literal, TypeVar

import orjson
from pydantic import BaseModel

from apiclient.errors import status_error

T = TypeVar("T", bound=BaseModel)

PatchType = Literal["json", "merge", "strategic"]
PATCH_CONTENT_TYPES: dict[str, str] = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
APPLY_CONTENT_TYPE = "application/apply-patch+yaml"


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


@dataclass(frozen=True)
class Request:
    """One call as sent: method, path, query, body and its content type."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str = "application/json"


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its objects, the list's resourceVersion and the token of the next page."""

    items: builtins.list[T]
    resource_version: str
    continue_token: str | None


class Requests(Generic[T]):
    """The requests of one kind's verbs, and the decoding of their answers."""

    def __init__(self, kind: Kind[T]) -> None:
        self.kind = kind

    def get(self, name: str, namespace: str | None) -> Request:
        return Request("GET", self.kind.path(namespace, name))

    def list(
        self,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        limit: int | None,
        continue_token: str | None = None,
    ) -> Request:
        params = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "limit": limit,
            "continue": continue_token,
        }
        return Request("GET", self.kind.path(namespace), params)

    def create(
        self, obj: T, namespace: str | None, dry_run: bool, field_manager: str | None
    ) -> Request:
        path = self.kind.path(namespace or namespace_of(obj))
        return Request("POST", path, _write_params(dry_run, field_manager), self.encode(obj))

    def put(self, obj: T, subresource: str, dry_run: bool, field_manager: str | None) -> Request:
        """PUT of the object or of a subresource, conditioned on the object's resourceVersion."""
        metadata = getattr(obj, "metadata", None)
        name = getattr(metadata, "name", None) or ""
        path = self.kind.path(namespace_of(obj), name, subresource)
        return Request("PUT", path, _write_params(dry_run, field_manager), self.encode(obj))

    def patch(
        self,
        name: str,
        patch: dict[str, Any] | builtins.list[dict[str, Any]],
        namespace: str | None,
        type: PatchType,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
    ) -> Request:
        path = self.kind.path(namespace, name, subresource)
        params = _write_params(dry_run, field_manager)
        return Request("PATCH", path, params, orjson.dumps(patch), PATCH_CONTENT_TYPES[type])

    def apply(
        self,
        obj: BaseModel | dict[str, Any],
        field_manager: str,
        namespace: str | None,
        force: bool,
        dry_run: bool,
        subresource: str = "",
    ) -> Request:
        """Server-side apply of what ``field_manager`` wants the object to hold: a full model, an apply
        configuration, or a dictionary; only the fields set are sent."""
        wire = obj if isinstance(obj, dict) else obj.model_dump(mode="json", exclude_unset=True)
        wire = {"apiVersion": self.kind.api_version, "kind": self.kind.kind, **wire}
        metadata = wire.get("metadata") or {}
        name = metadata.get("name", "")
        path = self.kind.path(namespace or metadata.get("namespace"), name, subresource)
        params = {**_write_params(dry_run, field_manager), "force": True if force else None}
        return Request("PATCH", path, params, orjson.dumps(wire), APPLY_CONTENT_TYPE)

    def delete(
        self,
        name: str,
        namespace: str | None,
        propagation_policy: str | None,
        preconditions: dict[str, str] | None,
        dry_run: bool,
    ) -> Request:
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = preconditions
        if dry_run:
            options["dryRun"] = ["All"]
        return Request("DELETE", self.kind.path(namespace, name), body=orjson.dumps(options))

    def delete_collection(self, namespace: str | None, label_selector: str | None) -> Request:
        return Request("DELETE", self.kind.path(namespace), {"labelSelector": label_selector})

    def watch(
        self,
        namespace: str | None,
        resource_version: str | None,
        label_selector: str | None,
        field_selector: str | None,
        timeout_seconds: int | None,
        bookmarks: bool,
    ) -> Request:
        params = {
            "watch": True,
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": True if bookmarks else None,
        }
        return Request("GET", self.kind.path(namespace), params)

    def encode(self, obj: T) -> bytes:
        wire = obj.model_dump(mode="json", exclude_unset=True)
        wire.setdefault("apiVersion", self.kind.api_version)
        wire.setdefault("kind", self.kind.kind)
        return orjson.dumps(wire)

    def decode(self, body: bytes) -> T:
        return self.kind.model.model_validate_json(body)

    def page(self, body: bytes) -> Page[T]:
        """A list's objects as models, validated from the body's bytes in one pass of pydantic's core (three
        times faster than parsing to dictionaries first); a list's items carry no apiVersion and kind on the
        wire, so they are set as the object read alone would have them."""
        document = _list_model(self.kind.model).model_validate_json(body)
        items: builtins.list[T] = document.items or []
        for item in items:
            if getattr(item, "api_version", "") is None:
                item.api_version = self.kind.api_version  # type: ignore[attr-defined]
            if getattr(item, "kind", "") is None:
                item.kind = self.kind.kind  # type: ignore[attr-defined]
        metadata = document.metadata or {}
        return Page(items, str(metadata.get("resourceVersion") or ""), metadata.get("continue"))

    def event(self, line: bytes) -> WatchEvent[T]:
        event = orjson.loads(line)
        raw = event.get("object") or {}
        if event.get("type") == "ERROR":
            raise status_error(int(raw.get("code") or 500), orjson.dumps(raw))
        version = str((raw.get("metadata") or {}).get("resourceVersion") or "")
        return WatchEvent(event["type"], self.kind.model.model_validate(raw), version)


@cache
def _list_model(model: type[T]) -> type[_List[T]]:
    """The list envelope of ``model``'s objects (made once per kind)."""
    return _List[model]  # type: ignore[valid-type]


class _List(BaseModel, Generic[T]):
    items: builtins.list[T] | None = None
    metadata: dict[str, Any] | None = None


def namespace_of(obj: BaseModel) -> str | None:
    metadata = getattr(obj, "metadata", None)
    namespace = getattr(metadata, "namespace", None)
    return str(namespace) if namespace else None


def _write_params(dry_run: bool, field_manager: str | None) -> dict[str, Any]:
    return {"dryRun": "All" if dry_run else None, "fieldManager": field_manager}
