"""kube's naming controller rules (apiextensions-apiserver pkg/controller/status/naming_controller.go):
which names a CRD keeps when another CRD of its group has accepted them, and the condition it reports."""

from __future__ import annotations

from builtin.apiextensions.naming import accepted_names, requested_names

WIDGETS = {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}


def test_fresh_names_are_accepted_with_kubes_defaults() -> None:
    requested = requested_names({"spec": {"names": {"plural": "widgets", "kind": "Widget"}}})
    assert requested == WIDGETS
    names, condition = accepted_names(requested, {}, [])
    assert names == WIDGETS
    assert condition == {"status": "True", "reason": "NoConflicts", "message": "no conflicts found"}


def test_a_plural_taken_by_another_crd_is_refused_and_left_empty() -> None:
    names, condition = accepted_names(
        {**WIDGETS, "kind": "Gadget", "listKind": "GadgetList"}, {}, [WIDGETS]
    )
    assert (
        condition["reason"] == "SingularConflict"
    )  # the last conflict found names the reason, as kube
    assert names["plural"] == "" and names["kind"] == "Gadget"


def test_a_kind_conflict_says_which_name_is_in_use() -> None:
    other = {**WIDGETS, "plural": "others", "singular": "other", "listKind": "OtherList"}
    _, condition = accepted_names(WIDGETS, {}, [other])
    assert condition == {
        "status": "False",
        "reason": "KindConflict",
        "message": '"Widget" is already in use',
    }


def test_short_names_conflicts_are_aggregated() -> None:
    other = {"plural": "others", "shortNames": ["a", "b"], "kind": "Other"}
    _, condition = accepted_names({**WIDGETS, "shortNames": ["a", "b", "c"]}, {}, [other])
    assert condition["reason"] == "ShortNamesConflict"
    assert condition["message"] == '["a" is already in use, "b" is already in use]'


def test_names_already_accepted_stay_accepted() -> None:
    names, condition = accepted_names(WIDGETS, WIDGETS, [WIDGETS])
    assert condition["status"] == "True" and names == WIDGETS
