"""The options of a write checked as kube checks them before it reads the body
(k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go: ValidateCreateOptions, ValidateUpdateOptions,
ValidatePatchOptions, ValidateDeleteOptions). A value kube does not know is a 422 Invalid of the options kind
(``CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]...``), never a 400, so clients
read the same cause kube gives them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from apiserver.machinery import errors
from apiserver.schema import causes
from apiserver.schema.causes import Cause

CREATE: Final = "CreateOptions"
UPDATE: Final = "UpdateOptions"
PATCH: Final = "PatchOptions"
DELETE: Final = "DeleteOptions"

DRY_RUN_VALUES: Final = ("All",)
FIELD_VALIDATION_VALUES: Final = ("", "Ignore", "Strict", "Warn")
"""Sorted as kube's sets.String.List() prints them in the cause."""
FIELD_MANAGER_MAX_LENGTH: Final = 128


def dry_run_causes(values: Sequence[str]) -> list[Cause]:
    """ValidateDryRun: every value must be ``All`` (an empty one too is refused)."""
    if all(value in DRY_RUN_VALUES for value in values):
        return []
    return [causes.not_supported("dryRun", list(values), DRY_RUN_VALUES)]


def field_validation_causes(value: str) -> list[Cause]:
    """ValidateFieldValidation: one of the modes, spelt exactly (``strict`` is refused)."""
    if value in FIELD_VALIDATION_VALUES:
        return []
    return [causes.not_supported("fieldValidation", value, FIELD_VALIDATION_VALUES)]


def field_manager_causes(manager: str) -> list[Cause]:
    """ValidateFieldManager: at most 128 bytes, printable characters only (Go's unicode.IsPrint, which
    Python's str.isprintable matches: letters, marks, numbers, punctuation, symbols and the ASCII space)."""
    found: list[Cause] = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        found.append(causes.too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    offset = 0  # Go ranges over a string by byte offset
    for char in manager:
        if not char.isprintable():
            # Go's %#U of a rune that is not printable: U+0007, without the quoted rune
            detail = f"invalid character U+{ord(char):04X} (at position {offset})"
            found.append(causes.invalid("fieldManager", manager, detail))
        offset += len(char.encode())
    return found


def refuse(kind: str, found: list[Cause]) -> None:
    """The 422 kube answers with ``errors.NewInvalid`` of ``<kind>.meta.k8s.io`` and no name."""
    if found:
        raise errors.invalid(
            kind,
            "meta.k8s.io",
            "",
            [errors.StatusCause(c.reason, c.message, c.field) for c in found],
        )
