"""Field ownership on writes: who the field manager is, managedFields on every create/update/patch, and
server-side apply (API-CONVENTIONS.md §5.3, §5.6), over the pure functions of apiserver.fieldmanager."""

from __future__ import annotations

from collections.abc import Callable

from apiserver.endpoints.decode import Target
from apiserver.endpoints.http import Request
from apiserver.fieldmanager import apply, gotyped, set_managed_fields, update_managed_fields
from apiserver.machinery import errors
from apiserver.machinery.convert import deep_copy
from apiserver.machinery.objects import Object
from apiserver.registry.meta import now_rfc3339

MAX_MANAGER_LENGTH = 128


def manager_name(request: Request) -> str:
    """``fieldManager``, else the User-Agent up to its first '/', as kube-apiserver names managers."""
    name = (
        request.query.get("fieldManager") or request.headers.get("user-agent", "").split("/", 1)[0]
    )
    if len(name) > MAX_MANAGER_LENGTH:
        raise errors.invalid(
            "PatchOptions", "meta.k8s.io", "",
            [errors.StatusCause("FieldValueTooLong", f"Too long: may not be more than {MAX_MANAGER_LENGTH} bytes", "fieldManager")],
        )  # fmt: skip
    return name


def ignored_fields(target: Target, subresource: str) -> tuple[str, ...]:
    """What an endpoint resets, so nobody gains or loses it there: status on the main resource of a kind
    with a status subresource, spec on /status."""
    if subresource == "status":
        return ("spec",)
    return ("status",) if target.version.status_subresource else ()


def tracker(
    request: Request,
    target: Target,
    old: Object | None,
    subresource: str = "",
    *,
    shared: bool = True,
) -> Callable[[Object], None] | None:
    """Records an Update by this request's manager on the object about to be stored (None: not tracked);
    on a kind answered, not stored (the reviews) too, whose answer echoes it as kube's does.

    ``shared``: the object admitted may share subtrees with ``old`` (a patch's result does), which
    admission would change under the comparison, so ``old`` is copied first; a PUT's body shares nothing.
    """
    manager = manager_name(request)
    now = now_rfc3339()
    ignored = ignored_fields(target, subresource)
    previous = deep_copy(old) if old is not None and shared else old
    go_type = gotyped.go_type(target.resource, target.version)

    def track(new: Object) -> None:
        entries = update_managed_fields(
            previous,
            new,
            target.version.schema,
            manager,
            api_version=target.api_version,
            now=now,
            subresource=subresource,
            ignored_fields=ignored,
            go_type=go_type,
        )
        set_managed_fields(new, entries)

    return track


def server_side_apply(
    request: Request,
    target: Target,
    live: Object | None,
    applied: Object,
    manager: str,
    subresource: str,
) -> Object:
    """The applied configuration merged into the live object (None: create), with managedFields set.

    Conflicts raise ApplyConflict (409). The caller resets ignored fields, keeps immutable metadata and
    defaults the result, in that order (kube defaults after the merge, so defaults belong to nobody).
    """
    merged, _ = apply(
        deep_copy(live) if live is not None else None,
        applied,
        target.version.schema,
        manager,
        api_version=target.api_version,
        force=request.flag("force"),
        now=now_rfc3339(),
        kind=target.resource.kind,
        subresource=subresource,
        ignored_fields=ignored_fields(target, subresource),
    )
    return merged
