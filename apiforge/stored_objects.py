"""`apiforge check --server`: the old revision is what a running server serves (its CustomResourceDefinitions
of the project's groups), and the objects it stores are judged by the new revision: what the new schema would
prune from each (data lost on its next write), what it would refuse (kube's pruning, defaulting, OpenAPI and
CEL validation, the same code `apiforge serve` runs), and whether each declared conversion of the new revision
brings the object back unchanged from every other version (hub → version → hub)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import httpx

from apiclient import Config, Connection, load_kubeconfig
from apiclient.config import ConfigError
from apiclient.errors import APIStatusError
from apiclient.requests import Request
from apiserver.schema.cel import validate_rules
from apiserver.schema.defaulting import apply_defaults, prune_nulls
from apiserver.schema.pruning import prune
from apiserver.schema.validation import validate
from builtin.apiextensions.strategy import stored_missing
from generator.definition import Definition, Version
from generator.evolution import Finding, compare
from generator.evolution_revision import Revision, from_crds
from generator.evolution_roundtrip import HookFailed, losses

__all__ = ["ServerUnreadable", "check_server"]

CRDS: Final = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
PAGE: Final = 500

_REFUSED: Final = (
    "creates of it are refused, and updates pass only where they leave the failing value unchanged "
    "(validation ratcheting)"
)


class ServerUnreadable(Exception):
    """The old revision could not be read: the kubeconfig names no server, the server does not answer, or it
    refuses (a 401 or 403). Not a finding: `apiforge check` exits 2, as for a revision it cannot read."""


def check_server(new: Revision, server: str | None, kubeconfig: Path | None) -> list[Finding]:
    """The findings of the change from the server's CRDs to ``new``, and of its stored objects."""
    try:
        return _check_server(new, server, kubeconfig)
    except (ConfigError, APIStatusError, httpx.HTTPError) as failure:
        raise ServerUnreadable(f"{type(failure).__name__}: {failure}") from failure


def _check_server(new: Revision, server: str | None, kubeconfig: Path | None) -> list[Finding]:
    config = load_kubeconfig(kubeconfig) if kubeconfig is not None else Config(server=server or "")
    if server:
        config = replace(config, server=server)
    groups = {d.group for d in new.definitions}
    with Connection(config) as connection:
        crds = _typed_items(json.loads(connection.send(Request("GET", CRDS))))
        old = from_crds([c for c in crds if c["spec"]["group"] in groups], config.server)
        found = compare(old, new)
        for crd in crds:
            found += _stored_versions(new, crd)
        for definition in new.definitions:
            before = old.find(definition.group, definition.kind)
            if before is not None:
                found += _objects(connection, new, definition, before)
    return sorted(found, key=lambda f: (f.file, f.line, f.rule, f.message))


def _typed_items(listed: dict[str, Any]) -> list[dict[str, Any]]:
    """A built-in list's items with the apiVersion and kind only the list names: kube encodes a typed
    list's items with an empty TypeMeta (a CustomResourceDefinitionList's items name neither)."""
    kind = str(listed.get("kind", "")).removesuffix("List")
    type_meta = {"apiVersion": listed.get("apiVersion"), "kind": kind}
    return [{**type_meta, **item} for item in listed["items"]]


def _stored_versions(new: Revision, crd: dict[str, Any]) -> list[Finding]:
    """The versions objects may still be stored in (the CRD's ``status.storedVersions``) that the new
    revision drops: kube-apiserver refuses such a CRD update, in these words (which say what to do)."""
    names = crd["spec"]["names"]
    definition = new.find(crd["spec"]["group"], names["kind"])
    if definition is None:
        return []
    declared = {v.name for v in definition.versions}
    found = []
    for index, stored in enumerate(crd.get("status", {}).get("storedVersions", ())):
        if stored not in declared:
            file, line = new.locate(definition, ("versions",))
            found.append(
                Finding(
                    file,
                    line,
                    "breaking",
                    "stored-version-removed",
                    f"{definition.kind}.{definition.group}",
                    stored,
                    "",
                    f'status.storedVersions[{index}]: Invalid value: "{stored}": {stored_missing(stored)}',
                )
            )
    return found


def _list(connection: Connection, path: str) -> Iterator[dict[str, Any]]:
    token = ""
    while True:
        params: dict[str, Any] = {"limit": PAGE, **({"continue": token} if token else {})}
        page = json.loads(connection.send(Request("GET", path, params)))
        yield from page["items"]
        token = page["metadata"].get("continue") or ""
        if not token:
            return


def _objects(
    connection: Connection, new: Revision, definition: Definition, before: Definition
) -> list[Finding]:
    served = {v.name for v in before.versions if v.served}
    found: list[Finding] = []
    for version in definition.versions:
        if version.name not in served:
            continue
        path = f"/apis/{definition.group}/{version.name}/{definition.plural}"
        for obj in _list(connection, path):
            check = _Check(new, definition, version, obj)
            check.schema()
            if version.storage:
                check.round_trips()
            found += check.found
    return found


class _Check:
    """The findings of one stored object, read in ``version``."""

    def __init__(
        self, new: Revision, definition: Definition, version: Version, obj: dict[str, Any]
    ) -> None:
        self.new = new
        self.definition = definition
        self.version = version
        self.obj = obj
        meta = obj.get("metadata", {})
        self.name = "/".join(filter(None, (meta.get("namespace"), meta.get("name"))))
        self.found: list[Finding] = []

    def add(self, rule: str, field: str, message: str, version: Version | None = None) -> None:
        at = version or self.version
        file, line = self.new.locate(self.definition, ("versions", at.name, "schema"))
        kind = f"{self.definition.kind}.{self.definition.group}"
        self.found.append(Finding(file, line, "breaking", rule, kind, at.name, field, message))

    def schema(self) -> None:
        obj = copy.deepcopy(self.obj)
        schema = self.version.schema
        for field in prune(obj, schema):
            self.add(
                "stored-object-pruned",
                field,
                f"stored {self.name}: {field} is not in the new schema and is lost on its next write",
            )
        prune_nulls(obj, schema)
        apply_defaults(obj, schema)
        causes = validate(obj, schema)
        causes += validate_rules(obj, None, schema, causes)
        for cause in causes:
            self.add(
                "stored-object-invalid",
                cause.field,
                f"stored {self.name} fails the new schema: {cause}; {_REFUSED}",
            )

    def round_trips(self) -> None:
        try:
            lost = list(losses(self.definition, self.obj))
        except HookFailed as failure:
            lost = []
            self.add("conversion-failed", "", f"stored {self.name}: {failure}")
        for version, field in lost:
            other = next(v for v in self.definition.versions if v.name == version)
            self.add(
                "conversion-lossy",
                field,
                f"stored {self.name}: {field} does not survive conversion to {version} and back; "
                f"a client of {version} that updates it loses the value",
                other,
            )
