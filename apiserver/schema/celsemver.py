"""Kubernetes' semver CEL library (k8s.io/apiserver/pkg/cel/library/semverlib.go, version 1, Kubernetes
1.33+): ``isSemver(s)``, ``semver(s)`` (both with an optional ``normalize`` flag), ``major()``,
``minor()``, ``patch()``, ``isGreaterThan``, ``isLessThan`` and ``compareTo``, parsing as
github.com/blang/semver/v4's ``Parse`` does, with its error messages.

A version is a map tagged ``@type: semver`` (as cellibs' values are); ``isGreaterThan``, ``isLessThan``
and ``compareTo`` are shared with quantities, so :mod:`apiserver.schema.cellibs` dispatches on the tag."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

TYPE: Final = "@type"
_ALPHANUMERIC: Final = re.compile(r"[0-9A-Za-z-]*")
Version = tuple[int, int, int, tuple[str, ...]]


class SemverError(ValueError):
    """A string blang/semver does not parse (the message is its)."""


def _number(text: str, what: str) -> int:
    if not text.isdigit() and text:
        raise SemverError(f'Invalid character(s) found in {what} number "{text}"')
    if len(text) > 1 and text[0] == "0":
        raise SemverError(f'{what.capitalize()} number must not contain leading zeroes "{text}"')
    if not text or int(text) >= 2**64:
        raise SemverError(f'strconv.ParseUint: parsing "{text}": invalid syntax')
    return int(text)


def _prerelease(part: str) -> str:
    if not part:
        raise SemverError("Prerelease is empty")
    if not _ALPHANUMERIC.fullmatch(part):
        raise SemverError(f'Invalid character(s) found in prerelease "{part}"')
    if part.isdigit() and len(part) > 1 and part[0] == "0":
        raise SemverError(f'Version contains leading zeroes: "{part}"')
    return part


def parse(text: str) -> Version:
    """blang/semver's Parse."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "major"), _number(parts[1], "minor")
    patch, _, build = parts[2].partition("+")
    patch, dash, pre = patch.partition("-")
    number = _number(patch, "patch")
    prerelease = tuple(_prerelease(p) for p in pre.split(".")) if dash else ()
    for meta in build.split(".") if "+" in parts[2] else ():
        if not meta:
            raise SemverError("Build meta data is empty")
        if not _ALPHANUMERIC.fullmatch(meta):
            raise SemverError(f'Invalid character(s) found in build meta data "{meta}"')
    return major, minor, number, prerelease


def _normalized(text: str) -> Version:
    """kube's normalizeAndParse: no ``v`` prefix, leading zeros dropped, a short version filled up."""
    parts = text.removeprefix("v").split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if any(ch in parts[-1] for ch in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


def _read(text: Any, normalize: Any = False) -> Version:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError("no such overload")
    return _normalized(text) if normalize else parse(text)


def _is_semver(text: Any, normalize: Any = False) -> bool:
    try:
        _read(text, normalize)
    except SemverError:
        return False
    return True


def _semver(text: Any, normalize: Any = False) -> dict[str, Any]:
    major, minor, patch, prerelease = _read(text, normalize)
    return {TYPE: "semver", "v": [major, minor, patch, list(prerelease)]}


def _version(value: Any) -> Version:
    if not isinstance(value, dict) or value.get(TYPE) != "semver":
        raise TypeError("no such overload")
    major, minor, patch, prerelease = value["v"]
    return int(major), int(minor), int(patch), tuple(prerelease)


def _pre_key(part: str) -> tuple[int, int, str]:
    return (0, int(part), "") if part.isdigit() else (1, 0, part)


def compare(left: Any, right: Any) -> int:
    """blang/semver's Version.Compare: numbers, then a release above its prereleases, then the
    prerelease identifiers (numeric below alphanumeric, a shorter list below a longer)."""
    a, b = _version(left), _version(right)
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    if not a[3] or not b[3]:
        return (not a[3]) - (not b[3])
    keys_a, keys_b = [_pre_key(p) for p in a[3]], [_pre_key(p) for p in b[3]]
    return (keys_a > keys_b) - (keys_a < keys_b)


def is_semver_value(value: Any) -> bool:
    return isinstance(value, dict) and value.get(TYPE) == "semver"


SEMVER: Final[dict[str, Callable[..., Any]]] = {
    "isSemver": _is_semver,
    "semver": _semver,
    "major": lambda v: _version(v)[0],
    "minor": lambda v: _version(v)[1],
    "patch": lambda v: _version(v)[2],
}
"""The library's own functions (the comparisons are dispatched by cellibs)."""
