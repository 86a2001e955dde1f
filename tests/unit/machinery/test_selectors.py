"""Label selectors parse and match as k8s.io/apimachinery/pkg/labels does (its selector_test.go cases)."""

from __future__ import annotations

import pytest

from apiserver.machinery import errors
from apiserver.machinery.selectors import matcher, parse_field_selector, parse_label_selector


def selects(selector: str, labels: dict[str, str]) -> bool:
    predicate = matcher(parse_label_selector(selector), ())
    assert predicate is not None
    return predicate({"metadata": {"labels": labels}})


# TestSelectorParse's good strings
@pytest.mark.parametrize(
    "selector", ["x=a,y=b,z=c", "x!=a,y=b", "x=", "x= ", "x=,z= ", "!x", "x>1", "x>1,z<5"]
)
def test_kubes_good_selectors_parse(selector: str) -> None:
    assert parse_label_selector(selector)


# TestSelectorParse's bad strings, and Gt/Lt with a value that is not an integer
@pytest.mark.parametrize("selector", ["x=a||y=b", "x==a==b", "!x=a", "x<a", "x>1.5"])
def test_kubes_bad_selectors_are_a_400(selector: str) -> None:
    with pytest.raises(errors.APIError) as refused:
        parse_label_selector(selector)
    assert refused.value.code == 400


def test_an_empty_value_is_a_value() -> None:
    # selector.go: parseExactValue takes "x==" as x == "", parseValues "()" as the set {""}
    assert selects("a==", {"a": ""}) and not selects("a==", {"a": "b"}) and not selects("a==", {})
    assert selects("a in ()", {"a": ""}) and not selects("a in ()", {"a": "b"})
    assert selects("a notin ()", {"a": "b"}) and not selects("a notin ()", {"a": ""})


def test_greater_and_less_than_compare_integer_labels() -> None:
    assert selects("x>1", {"x": "2"}) and not selects("x>1", {"x": "1"})
    assert selects("x<5,x>1", {"x": "3"}) and not selects("x<5", {"x": "9"})
    assert not selects("x>1", {"x": "many"}) and not selects("x>1", {})


def test_field_labels_select_on_their_stored_fields() -> None:
    """A strategy's field labels (kube's field label conversion and GetAttrs): the label's value is the first
    non-empty of its stored fields, as an Event's ``source`` is source.component, else reportingComponent."""
    labels = {"source": ("source.component", "reportingComponent"), "regarding.name": ("ref.name",)}
    fields = parse_field_selector("source=ctl,regarding.name!=x", ["reason"], labels=labels)
    match = matcher((), fields)
    assert match is not None
    assert match({"reportingComponent": "ctl", "ref": {"name": "y"}})
    assert not match({"source": {"component": "kubelet"}, "reportingComponent": "ctl"})
    assert not match({"source": {"component": "ctl"}, "ref": {"name": "x"}})
    with pytest.raises(errors.APIError, match=r"field label not supported: ref\.name"):
        parse_field_selector("ref.name=x", ["reason"], labels=labels)


def test_a_kind_without_field_labels_words_the_refusal_as_apimachinery() -> None:
    """DefaultMetaV1FieldSelectorConversion (k8s.io/apimachinery/pkg/runtime/conversion.go)."""
    with pytest.raises(errors.APIError) as refused:
        parse_field_selector("data.a=1", ["metadata.name", "metadata.namespace"], meta_only=True)
    assert refused.value.code == 400
    assert refused.value.message == (
        '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
