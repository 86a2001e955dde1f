"""What every verb's handler shares (kube's handlers/rest.go): the body read once, a write's options, the
dryRun directive, list options and waiting for a resourceVersion."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from apiserver.endpoints.decode import Target, check_type_meta, parse_body
from apiserver.endpoints.http import Request
from apiserver.endpoints.resourceversion import EXACT, wait_until_fresh
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.machinery.selectors import (
    matcher,
    parse_field_selector,
    parse_label_selector,
)
from apiserver.registry.admit import Track, WriteOptions
from apiserver.registry.offload import is_heavy, run_heavy
from apiserver.registry.store import ListOptions, Store, parse_resource_version
from apiserver.schema import causes, options
from apiserver.schema.causes import Cause, go_quote


def parse_object(raw: bytes, content_type: str, target: Target) -> Object:
    """The body as an object of the target's kind; 4xx for a malformed or mistyped one."""
    return check_type_meta(parse_body(raw, content_type, target), target)


@dataclass
class Body:
    """A request body, parsed once up front and again for every retry of an update: admission mutates
    the object it gets, and parsing the bytes again is cheaper than a deep copy kept for a retry that
    seldom comes."""

    raw: bytes
    content_type: str
    target: Target
    parsed: Object = field(init=False)
    _taken: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.parsed = self.parse()  # a malformed body is refused before anything else happens

    def parse(self) -> Object:
        return parse_object(self.raw, self.content_type, self.target)

    def take(self) -> Object:
        """The parsed body the first time, a fresh parse after that."""
        if self._taken:
            return self.parse()
        self._taken = True
        return self.parsed


async def read_body(request: Request, target: Target) -> Body:
    """The body as the target's kind, kept for a retry; a large one parsed off the event loop."""
    raw = await request.body()
    if is_heavy(len(raw)):
        return await run_heavy(Body, raw, request.content_type, target)
    return Body(raw, request.content_type, target)


async def read_object(request: Request, target: Target) -> Object:
    """The body as the target's kind, for a write that parses it once (a create); a large one parsed off
    the event loop."""
    raw = await request.body()
    if is_heavy(len(raw)):
        return await run_heavy(parse_object, raw, request.content_type, target)
    return parse_object(raw, request.content_type, target)


def write_options(
    request: Request, mode: str, tracker: Callable[[Object | None], Track | None] | None
) -> WriteOptions:
    """A client's write: its user, its fieldValidation, its warnings, its field manager, and whether its
    body is large enough to be worked on off the event loop."""
    return WriteOptions(request.user, mode, request.warnings, tracker, is_heavy(request.body_size))


@dataclass(frozen=True, slots=True)
class WriteQuery:
    """A write's options from its query, once kube's checks passed: the fieldValidation mode (empty read as
    Warn) and whether it is a dry run."""

    mode: str
    dry_run: bool


_NO_QUERY = WriteQuery("Warn", False)


def write_query(request: Request, kind: str, *, apply: bool = False) -> WriteQuery:
    """The query's CreateOptions, UpdateOptions or PatchOptions, refused as kube's handlers refuse them
    before reading the body: one 422 of ``<kind>.meta.k8s.io`` with every cause (ValidatePatchOptions adds
    the fieldManager an apply needs and the force only an apply may carry)."""
    query = request.query
    if not query and not apply:
        return _NO_QUERY  # nothing to refuse: kube's defaults
    found: list[Cause] = []
    if kind == options.PATCH:
        if apply and not query.get("fieldManager"):
            found.append(causes.required("fieldManager", "is required for apply patch"))
        if not apply and "force" in query:
            found.append(causes.forbidden("force", "may not be specified for non-apply patch"))
    found += options.field_manager_causes(query.get("fieldManager", ""))
    dry = [query["dryRun"]] if "dryRun" in query else []
    found += options.dry_run_causes(dry)
    found += options.field_validation_causes(query.get("fieldValidation", ""))
    options.refuse(kind, found)
    return WriteQuery(query.get("fieldValidation") or "Warn", bool(dry))


def list_options(request: Request, target: Target, store: Store) -> ListOptions:
    """The selectors, page and resourceVersion of a list, a watch or a deletecollection."""
    labels = parse_label_selector(request.query.get("labelSelector", ""))
    selectable = ["metadata.name", "metadata.namespace"]
    selectable += [f.lstrip(".") for f in target.version.selectable_fields]
    fields = parse_field_selector(
        request.query.get("fieldSelector", ""),
        selectable,
        # a built-in kind with no field of its own to select by has kube's default field label conversion
        meta_only=target.resource.builtin
        and not target.version.selectable_fields
        and not store.strategy.field_labels,
        labels=store.strategy.field_labels,
    )
    limit = _int64(request.query.get("limit") or "0")
    resource_version = request.query.get("resourceVersion", "")
    if (
        request.query.get("continue")
        and resource_version not in ("", "0")
        and not request.flag("watch")
    ):
        # k8s.io/apiserver/pkg/storage/interfaces.go ValidateListOptions: a page continues at its token's
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    revision = 0
    if request.query.get("resourceVersionMatch") == "Exact":
        revision = parse_resource_version(request.query.get("resourceVersion", ""))
    any_version = request.query.get("resourceVersion") == "0"
    return ListOptions(
        matcher(labels, fields),
        max(limit, 0),
        request.query.get("continue", ""),
        revision,
        any_version,
    )


def _int64(text: str) -> int:
    """An int64 query parameter as kube's parameter codec parses it (strconv.ParseInt), with its error."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value


async def wait_until_fresh_for(request: Request, store: Store) -> None:
    """A read at a resourceVersion not reached yet waits for it (kube's cacher, waitUntilFreshAndBlock):
    ``0`` is any state, and an Exact list is answered by storage at that revision, refused if future."""
    resource_version = request.query.get("resourceVersion", "")
    if resource_version in ("", "0") or request.query.get("resourceVersionMatch") == EXACT:
        return
    await wait_until_fresh(store.current_revision, parse_resource_version(resource_version))
