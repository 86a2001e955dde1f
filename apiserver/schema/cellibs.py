"""The Kubernetes CEL libraries beyond the string extensions (k8s.io/apiserver/pkg/cel/library): lists
(``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf`` on lists), regex (``find``,
``findAll``), url (``url``, ``isURL`` and the getters), ip and cidr (``ip``, ``isIP``, ``cidr``, ``isCIDR``,
``family``, ``isLoopback``, ``containsIP``...), quantity (``quantity``, ``isQuantity``, comparisons and
arithmetic) and format (``format.dns1123Label().validate(s)``..., :mod:`apiserver.schema.celformat`: contexts
bind its ``format`` variable), sets (:mod:`apiserver.schema.celsets`) and semver
(:mod:`apiserver.schema.celsemver`), for x-kubernetes-validations and admission expressions alike.

The evaluator (cel-rust) takes functions, not new types: a URL, IP, CIDR or quantity is a map tagged with
``@type``; the functions are methods on it (``url(s).getHost()``). Equality of two such values compares
their text, not their meaning (kube's ``quantity('1Gi') == quantity('1024Mi')`` is true; here use
``compareTo``)."""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, Final
from urllib.parse import urlsplit

from apiserver.schema import celformat, celmacros, celoptional, celsemver, celsets, celstrings
from apiserver.schema.celformat import FUNCTIONS as FORMAT
from apiserver.schema.celsets import SETS
from apiserver.schema.celstrings import STRINGS

TYPE: Final = "@type"


# -- lists ---------------------------------------------------------------------------------------------


def _index_of(receiver: Any, needle: Any, *rest: Any) -> int:
    if isinstance(receiver, str):
        return int(STRINGS["indexOf"](receiver, needle, *rest))
    return next((i for i, item in enumerate(receiver) if item == needle), -1)


def _last_index_of(receiver: Any, needle: Any, *rest: Any) -> int:
    if isinstance(receiver, str):
        return int(STRINGS["lastIndexOf"](receiver, needle, *rest))
    return next((i for i in range(len(receiver) - 1, -1, -1) if receiver[i] == needle), -1)


def _sum(items: list[Any]) -> Any:
    if any(isinstance(item, dict) and item.get(TYPE) == "quantity" for item in items):
        total = sum((_amount(item) for item in items), Decimal(0))
        return _quantity_value(total)
    return sum(items) if items else 0


def _least(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def _most(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


# -- regex ---------------------------------------------------------------------------------------------


def _find(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found.group(0) if found else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, text)]
    return found if limit < 0 else found[:limit]


# -- url -----------------------------------------------------------------------------------------------


def _is_url(text: str) -> bool:
    parts = urlsplit(text)
    return bool(parts.scheme) or text.startswith("/")


def _url(text: str) -> dict[str, Any]:
    if not _is_url(text):
        raise ValueError(f"URL parse error during conversion from string: {text!r}")
    return {TYPE: "url", "value": text}


def _url_part(name: str) -> Callable[[dict[str, Any]], Any]:
    def get(receiver: dict[str, Any]) -> Any:
        parts = urlsplit(str(receiver.get("value", "")))
        if name == "scheme":
            return parts.scheme
        if name == "host":
            return parts.netloc.rpartition("@")[2]
        if name == "hostname":
            return parts.hostname or ""
        if name == "port":
            return str(parts.port) if parts.port else ""
        if name == "path":
            return parts.path
        query: dict[str, list[str]] = {}
        for pair in filter(None, parts.query.split("&")):
            key, _, value = pair.partition("=")
            query.setdefault(key, []).append(value)
        return query

    return get


# -- ip and cidr ---------------------------------------------------------------------------------------


def _is_ip(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return not (isinstance(address, ipaddress.IPv6Address) and address.scope_id)


def _ip(text: str) -> dict[str, Any]:
    if not _is_ip(text):
        raise ValueError(f"IP Address {text!r} parse error during conversion from string")
    return {TYPE: "ip", "value": str(ipaddress.ip_address(text))}


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return "/" in text


def _cidr(text: str) -> dict[str, Any]:
    if not _is_cidr(text):
        raise ValueError(f"network address {text!r} parse error during conversion from string")
    return {TYPE: "cidr", "value": text}


def _address(value: dict[str, Any]) -> Any:
    text = str(value.get("value", ""))
    if value.get(TYPE) == "cidr":
        return ipaddress.ip_interface(text)
    return ipaddress.ip_address(text)


def _family(receiver: dict[str, Any]) -> int:
    return int(_address(receiver).version)


def _contains(receiver: dict[str, Any], other: Any) -> bool:
    network = ipaddress.ip_interface(str(receiver.get("value"))).network
    if isinstance(other, str):
        other = _cidr(other) if "/" in other else _ip(other)
    if other.get(TYPE) == "cidr":
        inner = ipaddress.ip_interface(str(other["value"])).network
        return inner.version == network.version and inner.subnet_of(network)  # type: ignore[arg-type]
    return ipaddress.ip_address(str(other["value"])) in network


IP_ROOT: Final = {TYPE: "ip-library"}
"""The value of the ``ip`` variable: ``ip.isCanonical(s)`` is a method of it to the evaluator, which keeps
variables and functions apart (``ip(s)`` is still the function)."""


def _is_canonical(receiver: Any, text: Any) -> bool:
    """ip.isCanonical: the address is written as Go's netip prints it (lower case, zeros compressed)."""
    if receiver != IP_ROOT or not isinstance(text, str):
        raise TypeError("no such overload")
    address = ipaddress.ip_address(_ip(text)["value"])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return text == f"::ffff:{address.ipv4_mapped}"
    return text == str(address)


def _is_link_local_multicast(receiver: dict[str, Any]) -> bool:
    address = _address(receiver)
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.ip_network("224.0.0.0/24")
    return bool(address.is_multicast) and (address.packed[1] & 0x0F) == 0x02


def _cidr_ip(receiver: dict[str, Any]) -> dict[str, Any]:
    return {TYPE: "ip", "value": str(ipaddress.ip_interface(str(receiver["value"])).ip)}


def _masked(receiver: dict[str, Any]) -> dict[str, Any]:
    return {TYPE: "cidr", "value": str(ipaddress.ip_interface(str(receiver["value"])).network)}


def _prefix_length(receiver: dict[str, Any]) -> int:
    return int(ipaddress.ip_interface(str(receiver["value"])).network.prefixlen)


# -- quantity ------------------------------------------------------------------------------------------

_SUFFIXES: Final = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60, "n": Decimal("1e-9"), "u": Decimal("1e-6"),
    "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"),
    "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18"),
}  # fmt: skip
_QUANTITY: Final = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?[0-9]+))?$"
)


def _parse_quantity(text: str) -> Decimal | None:
    match = _QUANTITY.match(text)
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number + suffix)
        return Decimal(number) * _SUFFIXES[suffix]
    except InvalidOperation:
        return None


def _quantity(text: str) -> dict[str, Any]:
    if _parse_quantity(text) is None:
        raise ValueError("quantities must match the regular expression " + _QUANTITY.pattern)
    return {TYPE: "quantity", "value": text}


def _amount(value: Any) -> Decimal:
    if isinstance(value, dict) and value.get(TYPE) == "quantity":
        parsed = _parse_quantity(str(value.get("value")))
        if parsed is not None:
            return parsed
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Decimal(value)
    raise TypeError("no such overload")


def _quantity_value(amount: Decimal) -> dict[str, Any]:
    text = format(amount.normalize(), "f")
    return {TYPE: "quantity", "value": text}


def _compare(left: Any, right: Any) -> int:
    """compareTo of two quantities or of two semantic versions (the libraries share the name)."""
    if celsemver.is_semver_value(left):
        return celsemver.compare(left, right)
    a, b = _amount(left), _amount(right)
    return (a > b) - (a < b)


def _as_integer(receiver: Any) -> int:
    amount = _amount(receiver)
    if amount != amount.to_integral_value() or not -(2**63) <= amount < 2**63:
        raise ValueError("cannot convert value to integer")
    return int(amount)


LIBRARIES: Final[dict[str, Callable[..., Any]]] = {
    **STRINGS,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "isSorted": lambda items: all(a <= b for a, b in itertools.pairwise(items)),
    "sum": _sum,
    "min": _least,
    "max": _most,
    "find": _find,
    "findAll": _find_all,
    "isURL": _is_url,
    "url": _url,
    "getScheme": _url_part("scheme"),
    "getHost": _url_part("host"),
    "getHostname": _url_part("hostname"),
    "getPort": _url_part("port"),
    "getEscapedPath": _url_part("path"),
    "getQuery": _url_part("query"),
    "isIP": _is_ip,
    "ip": lambda value: _cidr_ip(value) if isinstance(value, dict) else _ip(value),
    "isCIDR": _is_cidr,
    "cidr": _cidr,
    "family": _family,
    "isLoopback": lambda r: _address(r).is_loopback,
    "isUnspecified": lambda r: _address(r).is_unspecified,
    "isLinkLocalUnicast": lambda r: _address(r).is_link_local,
    "isLinkLocalMulticast": _is_link_local_multicast,
    "isCanonical": _is_canonical,
    "isGlobalUnicast": lambda r: _address(r).is_global,
    "containsIP": _contains,
    "containsCIDR": _contains,
    "masked": _masked,
    "prefixLength": _prefix_length,
    "isQuantity": lambda text: _parse_quantity(text) is not None,
    "quantity": _quantity,
    "sign": lambda r: (_amount(r) > 0) - (_amount(r) < 0),
    "isInteger": lambda r: _amount(r) == _amount(r).to_integral_value(),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda r: float(_amount(r)),
    "add": lambda r, other: _quantity_value(_amount(r) + _amount(other)),
    "sub": lambda r, other: _quantity_value(_amount(r) - _amount(other)),
    "isLessThan": lambda r, other: _compare(r, other) < 0,
    "isGreaterThan": lambda r, other: _compare(r, other) > 0,
    "compareTo": _compare,
    **FORMAT,
    **SETS,
    **celsemver.SEMVER,
    **celmacros.FUNCTIONS,
    **celoptional.FUNCTIONS,
}
"""Every function of the Kubernetes libraries this evaluator provides, by name."""

ROOTS: Final[dict[str, dict[str, str]]] = {
    celformat.VARIABLE: celformat.ROOT,
    celsets.VARIABLE: celsets.ROOT,
    celstrings.VARIABLE: celstrings.ROOT,
    "ip": IP_ROOT,
}
"""The variables every context binds: the evaluator reads a namespaced call (``sets.contains(a, b)``) as a
method of a variable, so each namespace is a variable whose value tags it."""
