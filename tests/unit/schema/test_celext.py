"""The CEL libraries kube-apiserver enables beyond the ones test_cellibs covers, evaluated as rules are
(compiled by apiserver/schema/cel.py's compile_rule, run with the libraries and their namespace
variables): cel-go's strings extension at version 2 (ext/strings.go and ext/formatting.go: the examples of
its documentation), the sets extension (ext/sets.go), two-variable comprehensions (ext/comprehensions.go),
and kube's semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go). Each case gives the value, or
the error text an evaluation fails with; and the estimated costs follow kube's cost.go and cel-go's
estimators."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from apiserver.schema.cel import RuleSyntaxError, compile_rule, unsupported_functions
from apiserver.schema.celcost import DeclaredSizes, Range, decl_type, estimate
from apiserver.schema.celerrors import error_text
from apiserver.schema.cellibs import LIBRARIES, ROOTS
from apiserver.schema.celparse import parse
from apiserver.schema.structural import Schema


def evaluate(expression: str, **variables: Any) -> Any:
    program = compile_rule(expression)
    context = cel.Context()
    for name in program.functions():
        if name in LIBRARIES:
            context.add_function(name, LIBRARIES[name])
    for name, value in {**ROOTS, **variables}.items():
        context.add_variable(name, value)
    return program.execute(context)


VALUES = [
    # strings: charAt, indexOf, lastIndexOf, substring, quote, format (ext/strings.go's examples)
    ("'hello'.charAt(4)", "o"),
    ("'hello'.charAt(5)", ""),
    ("'héllo'.charAt(1)", "é"),
    ("'hello mellow'.indexOf('')", 0),
    ("'hello mellow'.indexOf('ello', 2)", 7),
    ("'hello mellow'.indexOf('', 2)", 2),
    ("'hello mellow'.lastIndexOf('')", 12),
    ("'hello mellow'.lastIndexOf('ello', 6)", 1),
    ("'tacocat'.substring(4)", "cat"),
    ("'tacocat'.substring(0, 4)", "taco"),
    ("'tacocat'.substring(7)", ""),
    ("'TacoCÆt Xii'.lowerAscii()", "tacocÆt xii"),
    ("'hello hello'.replace('he', 'we', 1)", "wello hello"),
    ("'hello hello hello'.split(' ', 2)", ["hello", "hello hello"]),
    ("['hello', 'mellow'].join(' ')", "hello mellow"),
    (
        "strings.quote('single-quote with \"double quote\"')",
        '"single-quote with \\"double quote\\""',
    ),
    ("strings.quote('two escape sequences \\a\\n')", '"two escape sequences \\a\\n"'),
    (
        "'this is a string: %s\\nand an integer: %d'.format(['str', 42])",
        "this is a string: str\nand an integer: 42",
    ),
    ("'a double substituted with %%s: %s'.format([64.2])", "a double substituted with %s: 64.2"),
    (
        "'timestamp: %s'.format([timestamp('2023-02-03T23:31:20+00:00')])",
        "timestamp: 2023-02-03T23:31:20Z",
    ),
    ("'duration: %s'.format([duration('1h45m47s')])", "duration: 6347s"),
    ("'%f'.format([3.14])", "3.140000"),
    ("'%.3f'.format([1234.5678])", "1,234.568"),
    (
        "'scientific notation: %e'.format([2.71828])",
        "scientific notation: 2.718280\u202f\u00d7\u202f10\u2070\u2070",
    ),
    ("'5 in binary: %b'.format([5])", "5 in binary: 101"),
    ("'26 in hex: %x'.format([26])", "26 in hex: 1a"),
    ("'26 in hex (uppercase): %X'.format([26])", "26 in hex (uppercase): 1A"),
    ("'30 in octal: %o'.format([30])", "30 in octal: 36"),
    ("'%x'.format(['Hello'])", "48656c6c6f"),
    (
        "'a map inside a list: %s'.format([[1, 2, 3, {'a': 'x', 'b': 'y', 'c': 'z'}]])",
        'a map inside a list: [1, 2, 3, {"a":"x", "b":"y", "c":"z"}]',
    ),
    (
        "'true bool: %s - false bool: %s\\nbinary bool: %b'.format([true, false, true])",
        "true bool: true - false bool: false\nbinary bool: 1",
    ),
    ("'%s'.format([1234567.0])", "1.234567e+06"),
    ("'%s'.format([null])", "null"),
    # sets (ext/sets.go): CEL equality, 1 == 1.0
    ("sets.contains([], [])", True),
    ("sets.contains([1, 2, 3, 4], [2, 3])", True),
    ("sets.contains([1, 2.0, 3u], [1.0, 2u, 3])", True),
    ("sets.contains([[1], [2, 3]], [[2, 3.0]])", True),
    ("sets.contains([1], [true])", False),
    ("sets.equivalent([1, 2, 3], [3u, 2.0, 1])", True),
    ("sets.equivalent([1, 2], [2, 2, 2])", False),
    ("sets.intersects([1], [1.0, 2])", True),
    ("sets.intersects([], [1])", False),
    ("'abc'.contains('b')", True),
    # two-variable comprehensions and existsOne
    ("[1, 2, 3].all(i, v, v == i + 1)", True),
    ("{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)", True),
    ("[1, 2, 1].existsOne(i, v, v == 2)", True),
    ("[1, 2, 1].existsOne(v, v == 1)", False),
    ("[1, 2, 3].transformList(i, v, i * v)", [0, 2, 6]),
    ("[1, 2, 3].transformList(i, v, i > 0, v)", [2, 3]),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v * 10)", {"a": 10, "b": 20}),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v > 1, k)", {"b": "b"}),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, {v: k})", {1: "a", 2: "b"}),
    ("[3, 4].transformMap(i, v, v)", {0: 3, 1: 4}),
    ("[[1, 2]].all(i, p, p.all(j, v, v == i + j + 1))", True),
    ("{'i': 5}.all(i, v, {'i': i}.i == 'i')", True),
    # semver (semverlib.go)
    ("isSemver('1.2.3-alpha.1+build')", True),
    ("isSemver('v1.2')", False),
    ("isSemver('v1.2', true)", True),
    ("semver('01.02', true).minor()", 2),
    ("semver('1.2.3').major() + semver('1.2.3').patch()", 4),
    ("semver('1.2.3').compareTo(semver('2.0.0'))", -1),
    ("semver('1.2.3').compareTo(semver('0.1.2'))", 1),
    ("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", True),
    ("semver('1.0.0-alpha.beta').isGreaterThan(semver('1.0.0-alpha.1'))", True),
    ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
    # optional selection and indexing (cel.OptionalTypes); what follows in the chain is optional too
    ("self.?spec.?name.orValue('none')", "web"),
    ("self.?spec.?missing.orValue('none')", "none"),
    ("self.?status.phase.orValue('none')", "none"),
    ("self.spec.labels[?'app'].orValue('')", "x"),
    ("self.spec.ports[?5].hasValue()", False),
    ("self.?spec.ports[0].orValue(0)", 80),
    ("optional.ofNonZeroValue('').hasValue()", False),
    ("optional.none().or(optional.of(2)).value()", 2),
    # ip (library/ip.go): ip.isCanonical beside the ip() function
    ("ip.isCanonical('2001:db8::1')", True),
    ("ip.isCanonical('2001:DB8::1')", False),
    ("ip.isCanonical('2001:db8:0:0:0:0:0:1')", False),
    ("ip('ff02::1').isLinkLocalMulticast()", True),
    ("ip('224.0.0.5').isLinkLocalMulticast() && !ip('10.0.0.1').isLinkLocalMulticast()", True),
    # quantity keeps its comparisons beside semver's
    ("quantity('1Gi').compareTo(quantity('1024Mi'))", 0),
]


OBJECT = {"spec": {"name": "web", "labels": {"app": "x"}, "ports": [80]}}


@pytest.mark.parametrize(("expression", "expected"), VALUES, ids=[v[0] for v in VALUES])
def test_library_values(expression: str, expected: Any) -> None:
    assert evaluate(expression, self=OBJECT) == expected
    assert unsupported_functions(compile_rule(expression)) == []


ERRORS = [
    ("'hello'.charAt(-1)", "index out of range: -1"),
    ("'tacocat'.substring(-1)", "index out of range: -1"),
    ("'tacocat'.substring(2, 1)", "invalid substring range. start: 2, end: 1"),
    ("'tacocat'.substring(0, 8)", "index out of range: 8"),
    ("'hello mellow'.indexOf('ello', 20)", "index out of range: 20"),
    ("'hello mellow'.lastIndexOf('ello', -1)", "index out of range: -1"),
    ("''.lastIndexOf('a')", "index out of range: -1"),
    ("'%d %d'.format([1])", "index 1 out of range"),
    (
        "'%d'.format(['a'])",
        "error during formatting: decimal clause can only be used on integers, was given string",
    ),
    (
        "'%f'.format([1])",
        "error during formatting: fixed-point clause can only be used on doubles, was given int",
    ),
    (
        "'%b'.format(['a'])",
        "error during formatting: only integers and bools can be formatted as binary, was given string",
    ),
    ("'%c'.format([1])", 'could not parse formatting clause: unrecognized formatting clause "c"'),
    ("'%'.format([1])", "unexpected end of string"),
    ("semver('1.2')", "No Major.Minor.Patch elements found"),
    ("semver('01.2.3')", 'Major number must not contain leading zeroes "01"'),
    ("semver('1.2.3-')", "Prerelease is empty"),
    ("semver('v1.2-rc', true)", "short version cannot contain PreRelease/Build meta data"),
    ("[1, 1].transformMapEntry(i, v, {'k': v})", "insert failed: key k already exists"),
]


@pytest.mark.parametrize(("expression", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_library_errors_are_cel_gos(expression: str, message: str) -> None:
    with pytest.raises(Exception) as failed:
        evaluate(expression)
    assert error_text(failed.value) == message


def test_optional_list_elements_are_refused_by_the_parser() -> None:
    """``[?x]`` and ``{?k: v}`` are not provided: the parser's own error names the rule as written."""
    with pytest.raises(RuleSyntaxError, match=r"'\[\?optional.none\(\)\]'"):
        compile_rule("[?optional.none()]")


def test_reverse_and_the_lists_extension_are_not_kubes() -> None:
    """kube enables strings version 2 (reverse came with 3) and not cel-go's lists extension."""
    assert unsupported_functions(compile_rule("'abc'.reverse() == 'cba'")) == ["reverse"]
    assert unsupported_functions(compile_rule("[1, 2].slice(0, 1) == [1]")) == ["slice"]


SCHEMA = Schema(
    {
        "type": "object",
        "properties": {
            "s": {"type": "string", "maxLength": 40},
            "l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
            "m": {
                "type": "object",
                "maxProperties": 5,
                "additionalProperties": {"type": "string", "maxLength": 8},
            },
        },
    }
)


def cost(rule: str) -> Range:
    self_type = decl_type(SCHEMA)
    assert self_type is not None
    return estimate(parse(rule), self_type, DeclaredSizes(self_type))


def test_sets_cost_is_cel_gos_product_of_the_sizes() -> None:
    """estimateSetsCost: size(a) * size(b) * factor + 1 (equivalent: factor 2), plus its arguments
    (self.l: 2, a one-item list literal: 10)."""
    assert cost("sets.contains(self.l, [1])") == Range(2 + 10 + 1, 2 + 10 + 10 + 1)
    assert cost("sets.intersects(self.l, [1])") == Range(2 + 10 + 1, 2 + 10 + 10 + 1)
    assert cost("sets.equivalent(self.l, [1])") == Range(2 + 10 + 1, 2 + 10 + 20 + 1)


@pytest.mark.parametrize(
    ("rule", "same_as"),
    [
        # cost.go: substring is a traversal of its receiver, as lowerAscii
        ("self.s.substring(1) == ''", "self.s.lowerAscii() == ''"),
        # charAt has no estimator: cel-go's default, 1 plus the arguments
        ("self.s.charAt(0)", "self.s.size()"),
        # a two-variable comprehension costs as the one-variable macro over the same range
        ("self.l.all(i, v, v > 0)", "self.l.all(v, v > 0)"),
        ("self.l.existsOne(v, v > 0)", "self.l.exists_one(v, v > 0)"),
        ("self.l.transformList(i, v, v + 1)", "self.l.map(v, v + 1)"),
        ("self.l.transformList(i, v, v > 0, v + 1)", "self.l.map(v, v > 0, v + 1)"),
        # optional selection and indexing cost as selection and indexing
        ("self.?s.orValue('') == ''", "self.s.orValue('') == ''"),
        ("self.m[?'k'].orValue('')", "self.m['k'].orValue('')"),
    ],
)
def test_costs_follow_kubes_estimators(rule: str, same_as: str) -> None:
    assert cost(rule) == cost(same_as)


def test_ip_is_canonical_costs_two_traversals() -> None:
    """cost.go: the string is parsed, then compared with the parsed address's text; self.s costs 2 to
    reach, and its size is at most 160 (maxLength 40 code points, up to 4 bytes each): 160 * 0.2 to
    check."""
    assert cost("ip.isCanonical(self.s)") == Range(2, 2 + 32)


def test_format_costs_a_traversal_of_its_format_string() -> None:
    """cel-go's checker/cost.go (ExtFormatString, the version kube 1.34 vendors): the format string's size
    times 0.1, plus its target (a literal, 0) and its argument (a list literal: 10, holding self.s: 2); the
    result's size is unknown."""
    assert cost("'%s'.format([self.s])") == Range(13, 13)
    long_format = "'" + "a" * 200 + "%d'"
    assert cost(f"{long_format}.format([1])") == Range(31, 31)  # ceil(202 * 0.1) + 10 + 1 (the int)


def test_quote_costs_a_traversal_and_sizes_its_result() -> None:
    """cel-go's ExtQuoteString: a traversal of the string (self.s: 2 to reach, at most 160 bytes: 16), and
    a result of at most twice that plus the quotes, which bounds a comparison with it: (2 + 16) to quote,
    then min(322, 160) * 0.1 to compare with self.s, plus reaching self.s (2)."""
    assert cost("strings.quote(self.s)") == Range(2, 18)
    assert cost("strings.quote(self.s) == self.s") == Range(5, 2 + 16 + 2 + 16)
