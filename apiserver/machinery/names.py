"""apimachinery's name and label checks (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label,
IsDNS1123Subdomain, IsDNS1035Label, IsConfigMapKey, IsQualifiedName, IsValidLabelValue) in kube's words: the
machinery beneath both the schema's metadata validation and the selectors."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final

__all__ = [
    "RX_DNS1123_SUBDOMAIN",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_lowered_qualified_name",
    "is_qualified_name",
]

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = "(" + _LABEL_KEY_FMT + ")?"

_RX_DNS1123_LABEL: Final = re.compile(f"^{_DNS1123_LABEL_FMT}\\Z")
RX_DNS1123_SUBDOMAIN: Final = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}\\Z")
"""A lowercase RFC 1123 subdomain's characters (its length apart): a name checked once, as a new object's
usually is, needs no memo of passes."""
_RX_DNS1035_LABEL: Final = re.compile(f"^{_DNS1035_LABEL_FMT}\\Z")
_RX_LABEL_KEY: Final = re.compile(f"^{_LABEL_KEY_FMT}\\Z")
_RX_LABEL_VALUE: Final = re.compile(f"^{_LABEL_VALUE_FMT}\\Z")
_MEMO_SIZE: Final = 8192


class _Check:
    """A string check whose passes are remembered: label keys, label values and names repeat across
    the objects of a cluster, so most calls are a set lookup (which hot loops make themselves,
    through :attr:`valid`, to save the call). Failures, rare, are worked out each time."""

    def __init__(self, check: Callable[[str], list[str]]) -> None:
        self._check = check
        self.valid: set[str] = set()
        functools.update_wrapper(self, check)

    def __call__(self, value: str) -> list[str]:
        if value in self.valid:
            return []
        errs = self._check(value)
        if not errs:
            # Bounded (and a valid value is short): start over when full rather than grow with
            # every name ever seen.
            if len(self.valid) >= _MEMO_SIZE:
                self.valid.clear()
            self.valid.add(value)
        return errs


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """content.RegexError, including its odd ", or" separator between examples."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


@_Check
def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _RX_DNS1123_LABEL.match(value):
        if RX_DNS1123_SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


@_Check
def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_max_len_error(253))
    if not RX_DNS1123_SUBDOMAIN.match(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_RX_CONFIG_MAP_KEY = re.compile(_CONFIG_MAP_KEY_FMT)


def is_config_map_key(value: str) -> list[str]:
    """apimachinery's IsConfigMapKey: a key of a ConfigMap's or a Secret's data becomes a file name when
    mounted, so it is a DNS subdomain's length of file-name-safe characters and never a ``..`` path."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len_error(253))
    if not _RX_CONFIG_MAP_KEY.fullmatch(value):
        errs.append(
            _regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_MAP_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if value in (".", ".."):
        errs.append(f"must not be '{value}'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _RX_DNS1035_LABEL.match(value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


_LABEL_KEY_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


@_Check
def is_qualified_name(value: str) -> list[str]:
    """content.IsLabelKey: an optional DNS subdomain prefix and '/', then a name of at most 63."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _RX_LABEL_KEY.match(name):
        errs.append(
            "name part "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


@_Check
def is_lowered_qualified_name(value: str) -> list[str]:
    """An annotation key's check (ValidateAnnotations: IsQualifiedName of the key in lower case), whose
    passes are remembered as the keys were written."""
    return is_qualified_name(value.lower())


@_Check
def is_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _RX_LABEL_VALUE.match(value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs
