"""What a read's ``resourceVersion`` and ``resourceVersionMatch`` mean, as kube-apiserver reads them.

* ``resourceVersionMatch`` is validated as k8s.io/apimachinery/pkg/apis/meta/internalversion/validation
  ``ValidateListOptions`` does, and refused as the list handler refuses it (handlers/get.go ListResource:
  ``errors.NewInvalid`` of ``ListOptions.meta.k8s.io``, a 422 whose causes name ``resourceVersionMatch``).
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


def validate_list_options(query: Mapping[str, str]) -> None:
    """422 for a ``resourceVersionMatch`` kube refuses on a list (a watch does not read it here)."""
    match = query.get("resourceVersionMatch", "")
    if not match:
        return
    resource_version = query.get("resourceVersion", "")
    causes: list[StatusCause] = []
    if not resource_version:
        causes.append(
            _forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided")
        )
    if query.get("continue"):
        causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
    if match not in (EXACT, NOT_OLDER_THAN):
        causes.append(
            StatusCause(
                "FieldValueNotSupported",
                f'Unsupported value: {go_quoted(match)}: supported values: "Exact", "NotOlderThan", ""',
                "resourceVersionMatch",
            )
        )
    if match == EXACT and resource_version == "0":
        causes.append(
            _forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
        )
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def _forbidden(message: str) -> StatusCause:
    return StatusCause("FieldValueForbidden", f"Forbidden: {message}", "resourceVersionMatch")


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
