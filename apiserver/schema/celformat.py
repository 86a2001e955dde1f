"""Kubernetes' ``format`` CEL library (k8s.io/apiserver/pkg/cel/library/format.go, Kubernetes 1.31+): named
string formats whose ``validate`` gives kube's own error messages::

    format.dns1123Label().validate(self.name)            // optional.none() when valid, else
    format.named('uuid').value().validate(self.id)       // optional.of(['does not match the UUID format'])

The evaluator (cel-rust) has no namespaced functions: ``format.dns1123Label()`` is read as the method
``dns1123Label`` called on a variable ``format``, so contexts bind ``format`` to :data:`ROOT` (a map tagged as
the library), and a format is a map tagged ``@type: format`` with its name, as cellibs' values are."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from apiserver.machinery.names import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)
from apiserver.schema.celruntime import evaluator
from apiserver.schema.formats import check_format
from apiserver.schema.objectmeta import mask_trailing_dash

TYPE: Final = "@type"
ROOT: Final = {TYPE: "format-library"}
"""The value of the ``format`` variable."""
VARIABLE: Final = "format"


def _prefixed(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """NameIsDNSLabel(s, true) and its kin: ``check`` on a generateName prefix."""
    return lambda text: check(mask_trailing_dash(text))


_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_BAD_ESCAPE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _request_uri_error(text: str) -> str | None:
    """What Go's url.ParseRequestURI reports (kube's ``uri`` format), for the errors it finds first: an
    empty or controlled string, a missing scheme, a relative reference, a bad port or %-escape."""
    detail: str | None
    if not text:
        detail = "empty url"
    elif _CONTROL.search(text):
        detail = "net/url: invalid control character in URL"
    elif text.startswith(":"):
        detail = "missing protocol scheme"
    else:
        detail = _reference_error(text)
    if detail is None:
        return None
    return f"parse {json.dumps(text, ensure_ascii=False)}: {detail}"


def _reference_error(text: str) -> str | None:
    scheme = _SCHEME.match(text)
    has_scheme = scheme is not None and text[scheme.end() : scheme.end() + 1] == ":"
    rest = text[scheme.end() + 1 :] if scheme is not None and has_scheme else text
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/"):
        return None if has_scheme else "invalid URI for request"  # opaque (mailto:x) or relative
    if has_scheme and rest.startswith("//"):
        authority, _, rest = rest[2:].partition("/")
        host = authority.rpartition("@")[2]
        port = host[host.rindex("]") + 1 :] if "]" in host else host[host.find(":") :]
        if ":" in port and not port[1:].isdigit() and port != ":":
            return f"invalid port {json.dumps(port)} after host"
    bad = _BAD_ESCAPE.search(rest)
    if bad is not None:
        return f"invalid URL escape {json.dumps(rest[bad.start() : bad.start() + 3])}"
    return None


def _strfmt(name: str, message: str) -> Callable[[str], list[str]]:
    """A kube-openapi strfmt format, with the single message kube gives when it does not validate."""
    return lambda text: [] if check_format(name, text) else [message]


CHECKS: Final[dict[str, Callable[[str], list[str]]]] = {
    "dns1123Label": is_dns1123_label,
    "dns1123Subdomain": is_dns1123_subdomain,
    "dns1035Label": is_dns1035_label,
    "qualifiedName": is_qualified_name,
    "dns1123LabelPrefix": _prefixed(is_dns1123_label),
    "dns1123SubdomainPrefix": _prefixed(is_dns1123_subdomain),
    "dns1035LabelPrefix": _prefixed(is_dns1035_label),
    "labelValue": is_label_value,
    "uri": lambda text: [e] if (e := _request_uri_error(text)) is not None else [],
    "uuid": _strfmt("uuid", "does not match the UUID format"),
    "byte": _strfmt("byte", "invalid base64"),
    "date": _strfmt("date", "invalid date"),
    "datetime": _strfmt("datetime", "invalid datetime"),
}
"""kube's ConstantFormats: name -> the errors of a string (none: valid)."""

MAX_REGEX_SIZES: Final = {
    "dns1123Label": 30, "dns1123Subdomain": 60, "dns1035Label": 30, "qualifiedName": 60,
    "dns1123LabelPrefix": 30, "dns1123SubdomainPrefix": 60, "dns1035LabelPrefix": 30, "labelValue": 40,
    "uri": 1080, "uuid": 77, "byte": 83, "date": 70, "datetime": 70,
}  # fmt: skip
"""kube's MaxRegexSize of each format (the cost of ``validate`` is the string's times this; uri, uuid, byte
and the dates are the lengths of the govalidator and strfmt patterns kube measures)."""


def _root(receiver: Any) -> None:
    if receiver != ROOT:
        raise TypeError("no such overload")


def _format(name: str) -> Callable[[Any], dict[str, str]]:
    def constant(receiver: Any) -> dict[str, str]:
        _root(receiver)
        return {TYPE: "format", "name": name}

    return constant


def _named(receiver: Any, name: Any) -> Any:
    """format.named(name): optional.of(the format), or optional.none() for a name kube does not have."""
    _root(receiver)
    if not isinstance(name, str):
        raise TypeError("no such overload")
    if name not in CHECKS:
        return evaluator().OptionalValue.none()
    return evaluator().OptionalValue.of({TYPE: "format", "name": name})


def _validate(receiver: Any, text: Any) -> Any:
    """<Format>.validate(str): optional.none() when valid, else optional.of(the errors)."""
    if (
        not isinstance(receiver, dict)
        or receiver.get(TYPE) != "format"
        or not isinstance(text, str)
    ):
        raise TypeError("no such overload")
    errors = CHECKS[str(receiver["name"])](text)
    optional = evaluator().OptionalValue
    return optional.of(list(errors)) if errors else optional.none()


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "named": _named,
    "validate": _validate,
    **{name: _format(name) for name in CHECKS},
}
"""The library's functions, by the name cel-rust calls them by (methods of ``format`` and of a format)."""
