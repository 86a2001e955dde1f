"""The Kubernetes CEL libraries (apiserver/schema/cellibs.py), evaluated by the engine the rules use: the
results kube's library tests document (k8s.io/apiserver/pkg/cel/library: lists_test, regex_test, url_test,
ip_test, cidr_test, quantity_test)."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from apiserver.schema.cellibs import LIBRARIES


def evaluate(expression: str) -> Any:
    context = cel.Context()
    for name, function in LIBRARIES.items():
        context.add_function(name, function)
    return cel.compile(expression).execute(context)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("[1, 2, 3].isSorted()", True),
        ("['b', 'a'].isSorted()", False),
        ("[1, 2, 3].sum()", 6),
        ("[].sum()", 0),
        ("[3, 1, 2].min()", 1),
        ("[3, 1, 2].max()", 3),
        ("[1, 2, 3, 2].indexOf(2)", 1),
        ("[1, 2, 3, 2].lastIndexOf(2)", 3),
        ("'abc'.indexOf('c')", 2),
        ("'123 abc 456'.find('[0-9]+')", "123"),
        ("'123 abc 456'.findAll('[0-9]+')", ["123", "456"]),
        ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
        ("isURL('https://example.com:80/path?k=v')", True),
        ("isURL('not a url')", False),
        ("url('https://user@example.com:8443/p').getHost()", "example.com:8443"),
        ("url('https://example.com:8443/p').getHostname()", "example.com"),
        ("url('https://example.com:8443/p').getPort()", "8443"),
        ("url('https://example.com/a/b').getEscapedPath()", "/a/b"),
        ("url('https://example.com/?k=a&k=b').getQuery()", {"k": ["a", "b"]}),
        ("isIP('10.0.0.1')", True),
        ("isIP('10.0.0.256')", False),
        ("ip('::1').family()", 6),
        ("ip('127.0.0.1').isLoopback()", True),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", True),
        ("cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", False),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
        ("cidr('10.1.2.3/8').masked().prefixLength()", 8),
        ("cidr('10.1.2.3/8').ip().family()", 4),
        ("isQuantity('1.5Gi')", True),
        ("isQuantity('1.5Gb')", False),
        ("quantity('1Gi').compareTo(quantity('1024Mi'))", 0),
        ("quantity('1Gi').isGreaterThan(quantity('1G'))", True),
        ("quantity('500m').isLessThan(quantity('1'))", True),
        ("quantity('2k').asInteger()", 2000),
        ("quantity('1.5').isInteger()", False),
        ("quantity('-3').sign()", -1),
        ("quantity('1Gi').add(quantity('1Gi')).compareTo(quantity('2Gi'))", 0),
        ("quantity('1').sub(quantity('250m')).asApproximateFloat()", 0.75),
    ],
)
def test_kubernetes_libraries(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize(
    "expression",
    ["ip('nope')", "cidr('10.0.0.1')", "url('no scheme')", "quantity('1.5Gb')", "[].min()"],
)
def test_bad_values_are_evaluation_errors(expression: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 (cel-rust re-raises the function's error)
        evaluate(expression)
