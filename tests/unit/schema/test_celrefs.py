"""Undeclared references, located and worded as cel-go's checker reports them (checker/checker.go
checkIdent and checkCall; parser/parser.go locates an identifier at its first character and a call at its
``(``; common/errors.go ToDisplayString draws the caret). The expected texts are kube 1.34's, as its
apiserver answered (recorded by the differential oracle for the crd-cel scenario) or as cel-go renders
them."""

from __future__ import annotations

import pytest

from apiserver.schema.cellibs import LIBRARIES
from apiserver.schema.celrefs import undeclared

RULE_VARIABLES = ("self", "oldSelf")


def _error(source: str, column: int, name: str) -> str:
    return (
        f"ERROR: <input>:1:{column + 1}: undeclared reference to '{name}' (in container '')\n"
        f" | {source}\n | {'.' * column}^"
    )


@pytest.mark.parametrize(
    ("source", "found"),
    [
        # an identifier: at its first character
        ("self.foo == bar", [(12, "bar")]),
        ("self.all(x, x > y)", [(16, "y")]),
        ("self.transformList(i, v, v + zz)", [(29, "zz")]),
        # a global call: at its "("
        ("nosuch(self)", [(6, "nosuch")]),
        # a member call: at its "(" (kube 1.34: strings' reverse and lists' slice are not offered)
        (
            "strings.quote(self) != '\"forbidden\"' && self.reverse() != 'olleh'"
            " && '%s-%d'.format([self, 1]) != 'bad-1'",
            [(52, "reverse")],
        ),
        (
            "self.indexOf('zz') == -1 && self.lastIndexOf('zz') == -1"
            " && self.slice(0, self.size()).size() == self.size()",
            [(70, "slice")],
        ),
        # several: each, in the order of the source
        ("a.reverse() == b", [(0, "a"), (9, "reverse"), (15, "b")]),
        # a library namespace is no value
        ("self == sets", [(8, "sets")]),
    ],
)
def test_undeclared_references_are_reported_at_cel_gos_location(
    source: str, found: list[tuple[int, str]]
) -> None:
    expected = "\n".join(_error(source, column, name) for column, name in found)
    assert undeclared(source, RULE_VARIABLES, LIBRARIES) == expected


@pytest.mark.parametrize(
    "source",
    [
        "self == oldSelf",
        "type(self) == string && int(1) == 1",
        "self.map(x, x).size() > 0 && self.exists(k, v, v == k)",
        "has(self.a) && self.a.exists_one(z, z)",
        "self.transformMap(k, v, v.size()).all(k, k.size() <= 16)",
        "sets.contains(self, [1]) && strings.quote('a') != '' && ip.isCanonical('::1')",
        "format.dns1123Label().validate(self).hasValue()",
        "optional.of(1).hasValue() && optional.none().orValue(2) == 2",
        "isQuantity(self) && quantity(self).isLessThan(quantity('10Gi'))",
    ],
)
def test_declared_names_pass(source: str) -> None:
    assert undeclared(source, RULE_VARIABLES, LIBRARIES) is None


def test_the_caret_is_on_the_line_of_the_reference() -> None:
    assert undeclared("self.a &&\n  nope", RULE_VARIABLES, LIBRARIES) == (
        "ERROR: <input>:2:3: undeclared reference to 'nope' (in container '')\n |   nope\n | ..^"
    )


def test_admission_variables_are_the_environments() -> None:
    assert (
        undeclared("object.x == params.y && variables.z", ("object", "params", "variables"), ())
        is None
    )
    assert undeclared("self.x", ("object",), ()) == _error("self.x", 0, "self")


def test_a_field_an_object_variable_lacks_is_undefined_at_its_dot() -> None:
    """kube declares a policy's ``variables`` as an object of the variables defined (cel-go's checker:
    ``undefined field``, located at the selection's ``.``; kube 1.34's answers)."""
    fields = {"variables": ("ok",)}
    assert undeclared("variables.ok && variables.nope", ("variables",), (), fields) == (
        "ERROR: <input>:1:26: undefined field 'nope'\n"
        " | variables.ok && variables.nope\n | .........................^"
    )
    # has() is checked alike, located at its "(" (kube 1.34's answer)
    assert undeclared("has(variables.nope) || variables.ok", ("variables",), (), fields) == (
        "ERROR: <input>:1:4: undefined field 'nope'\n"
        " | has(variables.nope) || variables.ok\n | ...^"
    )


def test_a_global_library_function_called_as_a_method_has_no_overload() -> None:
    """kube declares quantity's sign() as a global overload only: ``q.sign()`` has no matching overload
    (kube 1.34's answer, recorded by the oracle for the crd-cel scenario)."""
    source = "quantity(self).add(quantity('1')).sign() == 1"
    assert undeclared(source, RULE_VARIABLES, LIBRARIES) == (
        "ERROR: <input>:1:39: found no matching overload for 'sign' applied to"
        f" 'kubernetes.Quantity.()'\n | {source}\n | {'.' * 38}^"
    )
    assert undeclared("sign(quantity(self)) == 1", RULE_VARIABLES, LIBRARIES) is None
