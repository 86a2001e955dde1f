"""apiserver.schema.celcost against kube's own expectations: the rules and expected costs of
TestCostEstimation (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/compilation_test.go), each
without bounds (kube's worst case from the 3 MiB request) and, where kube lists one, with its bound set."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.schema.celcost import (
    DeclaredSizes,
    cost_error,
    decl_type,
    estimate,
    max_cardinality,
)
from apiserver.schema.celparse import CelParseError, parse
from apiserver.schema.celstatic import CONTRIBUTED, FORBIDDEN, TOTAL, rule_problems
from apiserver.schema.structural import Schema

Raw = dict[str, Any]


def primitive(kind: str) -> Raw:
    """compilation_test.go parseRuleType: duration/date/date-time are formatted strings."""
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": kind}


def array(items: Raw | str, max_items: int | None = None) -> Raw:
    raw: Raw = {"type": "array", "items": primitive(items) if isinstance(items, str) else items}
    return raw if max_items is None else {**raw, "maxItems": max_items}


def map_of(values: Raw | str, max_properties: int | None = None) -> Raw:
    values = primitive(values) if isinstance(values, str) else values
    raw: Raw = {"type": "object", "additionalProperties": values}
    return raw if max_properties is None else {**raw, "maxProperties": max_properties}


def string(max_length: int | None = None, **extra: Any) -> Raw:
    raw: Raw = {"type": "string", **extra}
    return raw if max_length is None else {**raw, "maxLength": max_length}


OBJECT = {  # genObjectForMap / genObjectArrayWithRule's items
    "type": "object",
    "required": ["required"],
    "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
}


def nested(max_length: int | None) -> Raw:
    """genAllMaxNestedSpecWithRootRule."""
    inner: Raw = {**OBJECT} if max_length is None else {**OBJECT, "maxProperties": max_length}
    return array(map_of(inner, max_length), max_length)


# (name as in kube's table, schema, rule, expected cost)
KUBE_COSTS = [
    ("number array with all", array("number"), "self.all(x, true)", 4718591),
    ("number array with all, 10", array("number", 10), "self.all(x, true)", 32),
    ("string array with all", array("string"), "self.all(x, true)", 3145727),
    ("string array with all, 20", array("string", 20), "self.all(x, true)", 62),
    ("boolean array with all", array("boolean"), "self.all(x, true)", 1887437),
    ("array of number arrays with all", array(array("number")), "self.all(x, true)", 3145727),
    ("array of number arrays, 100", array(array("number"), 100), "self.all(x, true)", 302),
    ("array of objects with all", array(OBJECT), "self.all(x, true)", 555128),
    ("array of objects with all, 50", array(OBJECT, 50), "self.all(x, true)", 152),
    ("map of numbers with all", map_of("number"), "self.all(x, true)", 1348169),
    ("map of strings with all", map_of("string"), "self.all(x, true)", 1179647),
    ("map of strings with all, 3", map_of("string", 3), "self.all(x, true)", 11),
    ("map of booleans with all", map_of("boolean"), "self.all(x, true)", 943718),
    ("string with contains", string(), "self.contains('test')", 314574),
    ("string with contains, 10", string(10), "self.contains('test')", 5),
    ("string with startsWith", string(), "self.startsWith('test')", 2),
    ("string with endsWith", string(), "self.endsWith('test')", 2),
    ("concat string", string(), 'size(self + "hello") > size("hello")', 314578),
    ("concat string, 4", string(4), 'size(self + "hello") > size("hello")', 7),
    ("index of array with numbers", array("number"), "self[1] == 0.0", 2),
    ("index of array with strings", array("string"), "self[1] == self[1]", 314577),
    ("O(n^2) loop with numbers, 10", array("number", 10), "self.all(x, self.all(y, true))", 352),
    (
        "O(n^3) loop with numbers, 10",
        array("number", 10),
        "self.all(x, self.all(y, self.all(z, true)))",
        3552,
    ),
    ("regex matches simple", string(), 'self.matches("x")', 314574),
    ("regex matches simple, 50", string(50), 'self.matches("x")', 22),
    ("regex matches empty string", string(), '"".matches("(((((((((())))))))))[0-9]")', 7),
    ("regex matches empty regex", string(), 'self.matches("")', 1),
    (
        "map of strings with value length",
        map_of(string()),
        "self.all(x, x.contains(self[x]))",
        2752507,
    ),
    (
        "map of strings with value length, 10",
        map_of(string(10), 10),
        "self.all(x, x.contains(self[x]))",
        72,
    ),
    ("set array maxLength to zero", array("number", 0), "self[3] == 0.0", 2),
    ("set map maxLength to zero", map_of("number", 0), 'self["x"] == 0.0', 2),
    ("set string maxLength to zero", string(), 'self == "x"', 2),
    ("set string maxLength to zero, 0", string(0), 'self == "x"', 1),
    ("set bytes maxLength to zero, 0", string(0, format="byte"), 'self == b"x"', 1),
    ("set maxLength greater than estimated", array("number"), "self.all(x, x == 0.0)", 6291454),
    (
        "set maxLength greater than estimated, 3*1024*2048",
        array("number", 3 * 1024 * 2048),
        "self.all(x, x == 0.0)",
        25165826,
    ),
    ("nested types with root rule", nested(None), 'self.all(x, x["y"].required == "z")', 7340027),
    ("nested types with root rule, 10", nested(10), 'self.all(x, x["y"].required == "z")', 72),
    ("int-or-string array with all", array("int-or-string"), "self.all(x, true)", 4718591),
    ("index of array with int-or-strings", array("int-or-string"), "self[0] == 5", 3),
    ("index of array with booleans", array("boolean"), "self[0] == false", 2),
    ("index of array of objects", array(OBJECT), "self[0] == null", 2),
    ("index of array of array of numbers", array(array("number")), "self[0][0] == -1.0", 3),
    ("array of number maps with all", array(map_of("number")), "self.all(x, x.y == 25.2)", 6291452),
    (
        "array of number maps with all, 12",
        array(map_of("number"), 12),
        "self.all(x, x.y == 25.2)",
        74,
    ),
    ("index of array of number maps", array(map_of("number")), "self[0].x > 2.0", 4),
    ("duration array with all", array("duration"), "self.all(x, true)", 2359295),
    ("index of duration array", array("duration"), "self[0].getHours() == 2", 4),
    ("date array with all", array("date"), "self.all(x, true)", 725936),
    ("index of date array", array("date"), "self[2].getDayOfMonth() == 13", 4),
    ("date-time array with all", array("date-time"), "self.all(x, true)", 428963),
    ("map of int-or-strings with all", map_of("int-or-string"), "self.all(x, true)", 1348169),
    ("map of objects with all", map_of(OBJECT), "self.all(x, true)", 428963),
    ("map of number maps with all", map_of(map_of("number")), "self.all(x, true)", 1179647),
    ("map of number arrays with all", map_of(array("number")), "self.all(x, true)", 1179647),
    ("map of durations with all", map_of("duration"), "self.all(x, true)", 1048577),
    ("map of dates with all", map_of("date"), "self.all(x, true)", 524288),
    ("map of date-times with all", map_of("date-time"), "self.all(x, true)", 349526),
    ("extended library join", array(string()), "self.join(' ') == 'aa bb'", 329853068905),
    ("extended library join, 10", array(string(10), 10), "self.join(' ') == 'aa bb'", 43),
]


def cost(raw: Raw, rule: str) -> int:
    self_type = decl_type(Schema(raw))
    assert self_type is not None
    return estimate(parse(rule), self_type, DeclaredSizes(self_type)).max


@pytest.mark.parametrize(
    ("schema", "rule", "expected"), [c[1:] for c in KUBE_COSTS], ids=[c[0] for c in KUBE_COSTS]
)
def test_costs_are_kubes(schema: Raw, rule: str, expected: int) -> None:
    assert cost(schema, rule) == expected


def test_kubes_quadratic_loops_exceed_the_crd_limit_without_bounds() -> None:
    """TestCostEstimation's expectCalcCostExceedsLimit: costLimit (100,000,000)."""
    assert cost(array("number"), "self.all(x, self.all(y, true))") > 100_000_000
    assert cost(array("number"), "self.all(x, self.all(y, self.all(z, true)))") > 100_000_000


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # the other macros as cel-go expands them, over 10 integers: the range (1), the accumulator's
        # init, the result (1) and 10 times (condition + step)
        ("self.exists(x, x > 0)", 1 + 0 + 1 + 10 * (3 + 3)),  # !@result, @result || (x > 0)
        ("self.exists_one(x, x > 0)", 1 + 0 + 2 + 10 * (0 + 4)),  # (x > 0) ? @result + 1 : @result
        ("self.map(x, x * 2).size() > 0", 1 + 10 + 1 + 10 * (0 + 14) + 2),  # @result + [x * 2]
        (
            "self.filter(x, x > 0).size() > 0",
            1 + 10 + 1 + 10 * (0 + 15) + 2,
        ),  # (x > 0) ? @result + [x] : @result
        ("0 in self", 1 + 10),
        ("has(self.x)", 1),
    ],
)
def test_other_macros_and_operators(rule: str, expected: int) -> None:
    raw = array("integer", 10) if "has" not in rule else map_of("number")
    assert cost(raw, rule) == expected


def test_the_kubernetes_string_library_is_costed_as_kube_costs_it() -> None:
    """library/cost.go: lowerAscii traverses its string, split and replace twice."""
    bounded = string(10)  # 40 bytes
    assert cost(bounded, "self.lowerAscii() == 'a'") == 1 + 4 + 1
    assert cost(bounded, "self.split('-').size() > 1") == 1 + 8 + 1 + 1
    assert cost(bounded, "self.replace('a', 'b') == 'x'") == 1 + 8 + 1


def test_cardinality_of_an_unbounded_rule_is_what_fits_in_a_request() -> None:
    """kube's maxCardinality: 3 MiB over the smallest serialized value plus a comma."""
    assert max_cardinality(2) == 1048576
    assert max_cardinality(16) == 185042


@pytest.mark.parametrize(
    ("cost_", "factor"),
    [(10_000_001, "1.000000x"), (25_000_000, "2.5x"), (2_000_000_000, "more than 100x")],
)
def test_cost_error_words_the_factor_as_kube(cost_: int, factor: str) -> None:
    assert cost_error("estimated rule cost", cost_, 10_000_000).startswith(
        f"estimated rule cost exceeds budget by factor of {factor} (try simplifying the rule"
    )


@pytest.mark.parametrize(
    ("source", "size"),
    [
        ("'abc'", 3),
        ('"\\u00e9\\n"', 2),
        ("r'\\n'", 2),
        ("'''a\nb'''", 3),
        ("b'\\xff'", 1),
        ("'é'", 1),
    ],
)
def test_string_literals_have_cel_sizes(source: str, size: int) -> None:
    node = parse(source)
    assert getattr(node, "size", None) == size


@pytest.mark.parametrize("source", ["self.?", "self +", "a b", "{1: 2", "'unterminated"])
def test_what_the_parser_cannot_read_is_an_error(source: str) -> None:
    with pytest.raises(CelParseError):
        parse(source)


def _spec_list(max_items: int | None) -> dict[str, Any]:
    items = {
        "type": "string",
        "maxLength": 1000,
        "x-kubernetes-validations": [{"rule": "self.contains('a')"}],
    }
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"l": array(items, max_items)}}},
    }


RULE = ("properties", "spec", "properties", "l", "items", "x-kubernetes-validations", 0, "rule")


def test_a_rules_cost_is_multiplied_by_how_often_it_can_run() -> None:
    """kube's getExpressionCost: 401 per string of at most 1,000 characters (4,000 bytes), times the
    list's maxItems; without one, times the strings that fit in a request (3 MiB / 3)."""
    assert rule_problems(_spec_list(20_000)) == []
    assert rule_problems(_spec_list(30_000)) == [
        (RULE, FORBIDDEN + cost_error("estimated rule cost", 401 * 30_000, 10_000_000))
    ]
    assert "1.203000x" in rule_problems(_spec_list(30_000))[0][1]
    assert rule_problems(_spec_list(None)) == [
        (RULE, FORBIDDEN + cost_error("estimated rule cost", 401 * 1_048_576, 10_000_000)),
        (RULE, FORBIDDEN + CONTRIBUTED),
        ((), FORBIDDEN + cost_error(TOTAL, 401 * 1_048_576, 100_000_000)),
    ]


# (rule on a string of at most 64 characters, its cost): kube's library cost.go prices ``==`` between two of
# its own types (IPs, CIDRs, quantities, semvers) as one step and a URL's by its text; ``!=`` is not among
# them, so cel-go prices it as a comparison of two values of unknown size (no bound: over any limit)
LIBRARY_EQUALITY = [
    # self (1), each constructor call (1: kube leaves global ip(), cidr(), quantity() to cel-go), == (1)
    ("ip(self) == ip('10.0.0.1')", 1 + 1 + 1 + 1),
    ("cidr(self).masked() == cidr(self)", (1 + 1 + 1) + (1 + 1) + 1),
    ("cidr(self).ip() == ip('10.0.0.1')", (1 + 1 + 1) + 1 + 1),
    ("quantity(self) == quantity('1Gi')", 1 + 1 + 1 + 1),
    ("quantity(self).add(quantity('1')) == quantity('2')", (1 + 1 + 1 + 1) + 1 + 1),
    ("semver(self) == semver('1.0.0')", 1 + 1 + 1 + 1),
    # url() traverses its text (256 bytes: 26, 17: 2); == the right side's 17 bytes (2)
    ("url(self) == url('https://a.example')", (1 + 26) + 2 + 2),
    # containsIP: two IPs of 4 to 16 bytes (4), a string argument parsed too (1)
    ("cidr(self).containsIP(ip('10.0.0.1'))", (1 + 1) + 1 + 4),
    ("cidr(self).containsIP('10.0.0.1')", (1 + 1) + 4 + 1),
]


@pytest.mark.parametrize(("rule", "expected"), LIBRARY_EQUALITY)
def test_equality_of_kubes_library_types_is_costed_as_kube_costs_it(
    rule: str, expected: int
) -> None:
    assert cost(string(64), rule) == expected


def test_inequality_of_library_types_is_cel_gos_unbounded_comparison() -> None:
    assert cost(string(64), "ip(self) != ip('10.0.0.1')") > 100_000_000
