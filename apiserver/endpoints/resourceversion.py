"""What a read's ``resourceVersion`` and ``resourceVersionMatch`` mean, as kube-apiserver reads them.

* ``resourceVersionMatch`` and ``sendInitialEvents`` are validated as
  k8s.io/apimachinery/pkg/apis/meta/internalversion/validation ``ValidateListOptions`` does, and refused as
  the list handler refuses them (handlers/get.go ListResource: ``errors.NewInvalid`` of
  ``ListOptions.meta.k8s.io``, a 422 whose causes name the field).
* A read at a resourceVersion this server has not reached yet (``NotOlderThan``, the default for a non-zero
  one) waits for it, as the watch cache's ``waitUntilFreshAndBlock`` does, up to 3 s; then it is kube's 504
  ``Too large resource version`` (storage/errors.go ``NewTooLargeResourceVersionError``, with the
  ``ResourceVersionTooLarge`` cause and ``retryAfterSeconds`` 1 that make client-go's reflector retry).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

from apiserver.machinery import errors
from apiserver.machinery.errors import StatusCause
from apiserver.registry.admit import go_quoted

EXACT: Final = "Exact"
NOT_OLDER_THAN: Final = "NotOlderThan"
FRESHNESS_TIMEOUT: Final = 3.0
"""kube's blockTimeout in the watch cache's waitUntilFreshAndBlock."""
POLL_INTERVAL: Final = 0.02


def validate_list_options(query: Mapping[str, str], *, watch: bool = False) -> None:
    """422 for a ``resourceVersionMatch`` or ``sendInitialEvents`` kube refuses on a list or a watch (its
    WatchList feature on, as in kube 1.34); a present ``sendInitialEvents`` is set whatever its value, as
    the parameter codec reads a *bool."""
    causes = _watch_causes(query) if watch else _list_causes(query)
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def _list_causes(query: Mapping[str, str]) -> list[StatusCause]:
    match = query.get("resourceVersionMatch", "")
    resource_version = query.get("resourceVersion", "")
    causes: list[StatusCause] = []
    if match:
        if not resource_version:
            causes.append(
                _forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided")
            )
        if query.get("continue"):
            causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            causes.append(_not_supported(match, '"Exact", "NotOlderThan", ""'))
        if match == EXACT and resource_version == "0":
            causes.append(
                _forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
            )
    if "sendInitialEvents" in query:
        causes.append(
            _forbidden("sendInitialEvents is forbidden for list", field="sendInitialEvents")
        )
    return causes


def _watch_causes(query: Mapping[str, str]) -> list[StatusCause]:
    """validateWatchOptions: sendInitialEvents needs NotOlderThan, and resourceVersionMatch needs
    sendInitialEvents."""
    match = query.get("resourceVersionMatch", "")
    initial_events = "sendInitialEvents" in query
    causes: list[StatusCause] = []
    if initial_events and match != NOT_OLDER_THAN:
        causes.append(
            _forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        )
    if match:
        if not initial_events:
            causes.append(
                _forbidden(
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
                )
            )
        if match != NOT_OLDER_THAN:
            causes.append(_not_supported(match, '"NotOlderThan"'))
        if query.get("continue"):
            causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
    return causes


def _not_supported(match: str, supported: str) -> StatusCause:
    return StatusCause(
        "FieldValueNotSupported",
        f"Unsupported value: {go_quoted(match)}: supported values: {supported}",
        "resourceVersionMatch",
    )


def _forbidden(message: str, field: str = "resourceVersionMatch") -> StatusCause:
    return StatusCause("FieldValueForbidden", f"Forbidden: {message}", field)


async def wait_until_fresh(
    current_revision: Callable[[], Awaitable[int]],
    wanted: int,
) -> None:
    """Return once the store has reached revision ``wanted``; after FRESHNESS_TIMEOUT without it, kube's
    504."""
    current = await current_revision()
    deadline = time.monotonic() + FRESHNESS_TIMEOUT
    while current < wanted:
        if time.monotonic() >= deadline:
            raise errors.too_large_resource_version(wanted, current)
        await asyncio.sleep(POLL_INTERVAL)
        current = await current_revision()
