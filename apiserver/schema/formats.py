"""String formats the apiserver checks in custom resources: the analog of kube-openapi's
``pkg/validation/strfmt`` default registry, limited to the formats apiextensions-apiserver keeps
(``pkg/apiserver/validation/formats.go``).

Each checker follows the Go function it is named after closely enough for API validation; where the Go
library is lenient (``duration`` accepts "3 days", ``uri`` any absolute URI or path) so is this one,
because a stricter check would reject objects kube-apiserver accepts.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from collections.abc import Callable
from email.utils import parseaddr
from functools import cache
from typing import Final
from urllib.parse import urlsplit

__all__ = ["check_format", "is_known_format"]

_HOSTNAME_LABEL: Final = r"[a-zA-Z0-9\u0080-\U0010ffff]"
_HOSTNAME_PATTERN: Final = (
    rf"^({_HOSTNAME_LABEL}((-?{_HOSTNAME_LABEL}{{0,62}})?)|({_HOSTNAME_LABEL}(([a-zA-Z0-9\-\u0080-\U0010ffff]{{0,61}}"
    rf"{_HOSTNAME_LABEL})?)(\.)){{1,}}({_HOSTNAME_LABEL})(-?{_HOSTNAME_LABEL}){{1,62}})\Z"
)


@cache
def _hostname_regex() -> re.Pattern[str]:
    """Compiled on the first hostname checked: its Unicode classes take ~13 ms to compile, which every
    process importing the server (a test fixture's first start, the CLI) would pay otherwise."""
    return re.compile(_HOSTNAME_PATTERN)


_RX_UUID: Final = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z"
)
_RX_UUID3: Final = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z"
)
_RX_UUID4: Final = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"
)
_RX_UUID5: Final = re.compile(
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"
)
# strfmt.IsDateTime: a full date, then this, on the lower-cased text after the first "t".
_RX_TIME: Final = re.compile(
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z"
)
_RX_DATE: Final = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_RX_SSN: Final = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}\Z")
_RX_HEXCOLOR: Final = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_RX_RGBCOLOR: Final = re.compile(
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,"
    r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)\Z"
)
_RX_CREDITCARD: Final = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)"
    r"[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}"
    r"|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})\Z"
)
_RX_ISBN10: Final = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})\Z")
_RX_ISBN13: Final = re.compile(r"^(?:[0-9]{13})\Z")
_RX_BSON_OBJECT_ID: Final = re.compile(r"^[0-9a-fA-F]{24}\Z")
_RX_MAC: Final = re.compile(
    r"^(?:[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){7}"
    r"|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){19}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}"
    r"|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){3}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){9})\Z"
)
# time.ParseDuration, then strfmt's "<n> <unit>" fallback.
_RX_GO_DURATION: Final = re.compile(
    r"^[-+]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)\Z"
)
_RX_DURATION_PART: Final = re.compile(r"(\d+)\s*([A-Za-zµ]+)")
_DURATION_UNITS: Final = (
    ("ns", "nano"),
    ("us", "µs", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
# resource.ParseQuantity: <signedNumber><suffix>.
_RX_QUANTITY: Final = re.compile(
    r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?\Z"
)
_RX_K8S_SHORT_NAME: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_RX_K8S_LONG_NAME: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)


def _is_date(text: str) -> bool:
    if _RX_DATE.match(text) is None:
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _RX_TIME.match(parts[1])
    return match is not None and match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _is_duration(text: str) -> bool:
    if _RX_GO_DURATION.match(text):
        return True
    for _, unit in _RX_DURATION_PART.findall(text):
        unit = unit.lower().strip()
        for variants in _DURATION_UNITS:
            if unit in variants or unit.startswith(variants[-1]):
                return True
    return False


def _is_uri(text: str) -> bool:
    # govalidator.IsRequestURI: url.ParseRequestURI succeeds, i.e. an absolute URI or an absolute path.
    if not text or any(c in text for c in " \t\n"):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return bool(parts.scheme) or text.startswith("/")


def _is_email(text: str) -> bool:
    _, address = parseaddr(text)
    return bool(address) and "@" in address


def _is_hostname(text: str) -> bool:
    return (
        _hostname_regex().match(text) is not None
        and len(text.encode()) <= 255
        and all(len(p.encode()) <= 63 for p in text.split("."))
    )


def _is_ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False

    return check


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def _is_base64(text: str) -> bool:
    # base64.StdEncoding.DecodeString succeeds (kube-openapi dropped govalidator's regexp): padding is
    # required, newlines are skipped, and the empty string is valid.
    try:
        base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _isbn_digits(text: str) -> str:
    return text.replace("-", "").replace(" ", "")


def _is_isbn10(text: str) -> bool:
    digits = _isbn_digits(text)
    if _RX_ISBN10.match(digits) is None:
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _is_isbn13(text: str) -> bool:
    digits = _isbn_digits(text)
    if _RX_ISBN13.match(digits) is None:
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits))
    return total % 10 == 0


def _is_credit_card(text: str) -> bool:
    digits = re.sub(r"[^0-9]", "", text)
    if _RX_CREDITCARD.match(digits) is None:
        return False
    total, double = 0, False
    for c in reversed(digits):  # Luhn
        d = int(c) * (2 if double else 1)
        total += d - 9 if d > 9 else d
        double = not double
    return total % 10 == 0


_CHECKS: Final[dict[str, Callable[[str], bool]]] = {
    "bsonobjectid": lambda s: _RX_BSON_OBJECT_ID.match(s) is not None,
    "uri": _is_uri,
    "email": _is_email,
    "hostname": _is_hostname,
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "cidr": _is_cidr,
    "mac": lambda s: _RX_MAC.match(s) is not None,
    "uuid": lambda s: _RX_UUID.match(s) is not None,
    "uuid3": lambda s: _RX_UUID3.match(s) is not None,
    "uuid4": lambda s: _RX_UUID4.match(s) is not None,
    "uuid5": lambda s: _RX_UUID5.match(s) is not None,
    "isbn": lambda s: _is_isbn10(s) or _is_isbn13(s),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_credit_card,
    "ssn": lambda s: _RX_SSN.match(s) is not None,
    "hexcolor": lambda s: _RX_HEXCOLOR.match(s) is not None,
    "rgbcolor": lambda s: _RX_RGBCOLOR.match(s) is not None,
    "byte": _is_base64,
    "password": lambda s: True,
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_date_time,
    "quantity": lambda s: _RX_QUANTITY.match(s) is not None,
    "k8sshortname": lambda s: len(s) <= 63 and _RX_K8S_SHORT_NAME.match(s) is not None,
    "k8slongname": lambda s: len(s) <= 253 and _RX_K8S_LONG_NAME.match(s) is not None,
}


def _normalize(name: str) -> str:
    # go-openapi's registry normalisation: "date-time" and "datetime" are one format.
    return name.replace("-", "").replace("_", "").lower()


def is_known_format(name: str) -> bool:
    """Whether the registry has a checker for ``name`` (strfmt ``Registry.ContainsName``)."""
    return _normalize(name) in _CHECKS


def check_format(name: str, value: str) -> bool:
    """Whether ``value`` is valid for format ``name``; unknown formats accept everything."""
    check = _CHECKS.get(_normalize(name))
    return True if check is None else check(value)
