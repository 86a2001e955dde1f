"""``apply``: server-side apply merge, pruning, ownership and conflicts.

Checked against sigs.k8s.io/structured-merge-diff merge/update.go (``Updater.Apply``, ``prune``,
``addBackOwnedItems``, ``addBackDanglingItems``), typed/merge.go and typed/tofieldset.go, and kube's
k8s.io/apimachinery/pkg/util/managedfields/internal (structuredmerge.go, skipnonapplied.go,
managedfieldsupdater.go, versioncheck.go) with the cases of kube's
test/integration/apiserver/apply/apply_test.go (``TestApplyAlsoCreates``, ``TestApplyManagedFields``,
``TestApplyRemovesEmptyManagedFields``, ``TestApplyFailsWithVersionMismatch``) and fieldmanager_test.go
(``TestApplyFailsWithManagedFields``, ``TestNoOpChanges``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fm_schemas import CONFIGMAP, CONFIGMAP_GV, WIDGET, WIDGET_GV, widget
from fm_support import CRONTAB_GV, T0, T1, T2, T3, crontab, entry, stored

from apiserver.fieldmanager import ApplyConflict, apply, update_managed_fields
from apiserver.machinery.errors import APIError


def ssa(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    now: str,
    force: bool = False,
    schema: dict[str, Any] = WIDGET,
    api_version: str = WIDGET_GV,
    **kwargs: Any,
) -> dict[str, Any]:
    """Apply and return the object as stored."""
    obj, managed = apply(
        live, config, schema, manager, api_version=api_version, force=force, now=now, **kwargs
    )
    assert obj["metadata"].get("managedFields", []) == managed
    return stored(obj, managed)


def put(old: dict[str, Any], new: dict[str, Any], manager: str, now: str) -> dict[str, Any]:
    managed = update_managed_fields(old, new, WIDGET, manager, api_version=WIDGET_GV, now=now)
    return stored(new, managed)


def test_apply_creates_and_owns_what_it_applied() -> None:
    obj = ssa(None, widget({"image": "a", "tags": ["x"]}, labels={"app": "w"}), "applier", T0)
    assert obj["spec"] == {"image": "a", "tags": ["x"]}
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "applier",
            "operation": "Apply",
            "apiVersion": WIDGET_GV,
            "time": T0,
            "fieldsType": "FieldsV1",
            # Declared fields are not owned themselves (no "." on f:spec), unlike for an update.
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:image": {}, "f:tags": {'v:"x"': {}}},
            },
        }
    ]


def test_apply_of_a_crontab_matches_the_conventions_example(crontab_schema: dict[str, Any]) -> None:
    obj, managed = apply(
        None,
        crontab({"cronSpec": "* * * * */5", "image": "img"}),
        crontab_schema,
        "kubectl",
        api_version=CRONTAB_GV,
        kind="CronTab",
        force=False,
        now=T0,
    )
    assert managed[0]["fieldsV1"] == {"f:spec": {"f:cronSpec": {}, "f:image": {}}}
    assert obj["kind"] == "CronTab"


def test_apply_with_only_name_and_namespace_leaves_no_managed_fields() -> None:
    # TestApplyRemovesEmptyManagedFields.
    live = ssa(None, widget(), "apply_test", T0)
    live = ssa(live, widget(), "apply_test", T1)
    assert "managedFields" not in live["metadata"]


def test_reapplying_the_same_configuration_changes_nothing() -> None:
    # TestNoOpChanges: a no-op apply keeps the object, the managed fields and their time.
    config = widget({"image": "a", "containers": [{"name": "c", "image": "i"}]})
    live = ssa(None, config, "applier", T0)
    again, managed = apply(
        live, copy.deepcopy(config), WIDGET, "applier", api_version=WIDGET_GV, force=False, now=T1
    )
    assert again == live
    assert managed == live["metadata"]["managedFields"]


def test_noop_apply_by_a_new_manager_adds_an_entry_without_time() -> None:
    # managedfieldsupdater.go only sets the time when the object changed; the new applier still
    # shares ownership of the fields.
    config = widget({"image": "a"})
    live = ssa(None, config, "first", T0)
    after = ssa(live, copy.deepcopy(config), "second", T1)
    second = entry(after["metadata"]["managedFields"], "second", "Apply")
    assert "time" not in second
    assert second["fieldsV1"] == {"f:spec": {"f:image": {}}}
    assert after["spec"] == live["spec"]


def test_fields_dropped_from_the_configuration_are_removed() -> None:
    live = ssa(None, widget({"image": "a", "replicas": 2, "config": {"a": "1", "b": "2"}}), "m", T0)
    live = ssa(live, widget({"image": "a", "config": {"a": "1"}}), "m", T1)
    assert live["spec"] == {"image": "a", "config": {"a": "1"}}
    assert live["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {"f:config": {"f:a": {}}, "f:image": {}}
    }


def test_a_struct_the_applier_no_longer_sets_is_removed_whole() -> None:
    # EnsureNamedFieldsAreMembers: spec.template goes when nobody owns anything in it any more.
    live = ssa(None, widget({"image": "a", "template": {"a": "x"}}), "m", T0)
    live = ssa(live, widget({"image": "a"}), "m", T1)
    assert live["spec"] == {"image": "a"}
    live = ssa(live, widget(), "m", T2)
    assert "spec" not in live


def test_dropped_fields_another_applier_owns_stay() -> None:
    live = ssa(None, widget({"image": "a", "replicas": 2}), "one", T0)
    live = ssa(live, widget({"replicas": 2}), "two", T1)  # same value: shared, no conflict
    assert entry(live["metadata"]["managedFields"], "two", "Apply")["fieldsV1"] == {
        "f:spec": {"f:replicas": {}}
    }
    live = ssa(live, widget({"image": "a"}), "one", T2)
    assert live["spec"] == {"image": "a", "replicas": 2}


def test_dropped_fields_an_updater_took_over_stay() -> None:
    # A controller that changes a field takes it; the applier dropping it later does not remove it.
    live = ssa(None, widget({"image": "a", "replicas": 2}), "applier", T0)
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    live = put(live, scaled, "hpa", T1)
    live = ssa(live, widget({"image": "a"}), "applier", T2)
    assert live["spec"] == {"image": "a", "replicas": 5}
    assert entry(live["metadata"]["managedFields"], "hpa", "Update")["fieldsV1"] == {
        "f:spec": {"f:replicas": {}}
    }


def test_unowned_fields_are_not_removed() -> None:
    live = ssa(None, widget({"image": "a"}), "applier", T0)
    live["spec"]["paused"] = True  # e.g. set while managedFields were not tracked
    live = ssa(live, widget({"image": "b"}), "applier", T1)
    assert live["spec"] == {"image": "b", "paused": True}


def test_conflict_with_an_updater_that_set_a_different_value() -> None:
    created = update_managed_fields(
        None,
        widget({"image": "a", "replicas": 1}),
        WIDGET,
        "kubectl-create",
        api_version=WIDGET_GV,
        now=T0,
    )
    live = stored(widget({"image": "a", "replicas": 1}), created)
    with pytest.raises(ApplyConflict) as info:
        apply(live, widget({"image": "b"}), WIDGET, "m", api_version=WIDGET_GV, force=False, now=T1)
    assert info.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "kubectl-create" using example.com/v1: .spec.image',
        "reason": "Conflict",
        "code": 409,
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "kubectl-create" using example.com/v1',
                    "field": ".spec.image",
                }
            ]
        },
    }


def test_same_value_is_not_a_conflict_and_ownership_is_shared() -> None:
    created = update_managed_fields(
        None, widget({"image": "a"}), WIDGET, "creator", api_version=WIDGET_GV, now=T0
    )
    live = stored(widget({"image": "a"}), created)
    live = ssa(live, widget({"image": "a"}), "applier", T1)
    managed = live["metadata"]["managedFields"]
    assert entry(managed, "applier", "Apply")["fieldsV1"] == {"f:spec": {"f:image": {}}}
    assert entry(managed, "creator", "Update")["fieldsV1"] == {"f:spec": {".": {}, "f:image": {}}}


def test_force_moves_ownership() -> None:
    created = update_managed_fields(
        None,
        widget({"image": "a", "replicas": 1}),
        WIDGET,
        "creator",
        api_version=WIDGET_GV,
        now=T0,
    )
    live = stored(widget({"image": "a", "replicas": 1}), created)
    live = ssa(live, widget({"image": "b"}), "applier", T1, force=True)
    managed = live["metadata"]["managedFields"]
    assert live["spec"] == {"image": "b", "replicas": 1}
    assert entry(managed, "applier", "Apply")["fieldsV1"] == {"f:spec": {"f:image": {}}}
    assert entry(managed, "creator", "Update")["fieldsV1"] == {
        "f:spec": {".": {}, "f:replicas": {}}
    }


def test_conflicts_between_appliers_name_no_version() -> None:
    live = ssa(None, widget({"image": "a", "replicas": 1}), "one", T0)
    with pytest.raises(ApplyConflict) as info:
        ssa(live, widget({"image": "b", "replicas": 2}), "two", T1)
    assert info.value.message == (
        'Apply failed with 2 conflicts: conflicts with "one":\n- .spec.image\n- .spec.replicas'
    )
    assert [c.to_dict() for c in info.value.causes] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "one"',
            "field": ".spec.image",
        },
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "one"',
            "field": ".spec.replicas",
        },
    ]


def test_conflicts_with_several_managers_are_grouped_by_sorted_manager() -> None:
    live = ssa(None, widget({"image": "a"}), "zed", T0)
    changed = copy.deepcopy(live)
    changed["spec"]["replicas"] = 3
    changed["spec"]["tags"] = ["t"]
    live = put(live, changed, "alpha", T1)
    with pytest.raises(ApplyConflict) as info:
        ssa(live, widget({"image": "b", "replicas": 4, "tags": ["t", "u"]}), "me", T2)
    # conflict.go getConflictMessage: managers sorted by their identifier JSON, paths in set order.
    assert info.value.message == (
        "Apply failed with 2 conflicts: "
        'conflicts with "alpha" using example.com/v1:\n- .spec.replicas\n'
        'conflicts with "zed":\n- .spec.image'
    )


def test_conflict_on_a_field_an_applier_owns_through_a_subresource() -> None:
    live = ssa(None, widget({"image": "a"}), "m", T0)
    live = ssa(
        live,
        {**widget(), "status": {"phase": "Running"}},
        "kubelet",
        T1,
        subresource="status",
        ignored_fields=["spec"],
    )
    status_entry = entry(live["metadata"]["managedFields"], "kubelet", "Apply")
    assert status_entry["subresource"] == "status"
    with pytest.raises(ApplyConflict) as info:
        ssa(live, {**widget(), "status": {"phase": "Failed"}}, "other", T2, subresource="status")
    assert info.value.message == (
        'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status": .status.phase'
    )


def test_ignored_fields_are_merged_but_never_owned_or_conflicting() -> None:
    created = update_managed_fields(
        None,
        {**widget({"image": "a"}), "status": {"phase": "Pending"}},
        WIDGET,
        "creator",
        api_version=WIDGET_GV,
        now=T0,
        ignored_fields=["status"],
    )
    live = stored({**widget({"image": "a"}), "status": {"phase": "Pending"}}, created)
    obj = ssa(
        live,
        {**widget({"image": "a"}), "status": {"phase": "Done"}},
        "m",
        T1,
        ignored_fields=["status"],
    )
    assert obj["status"] == {"phase": "Done"}  # the caller resets it, as kube's strategy does
    assert entry(obj["metadata"]["managedFields"], "m", "Apply")["fieldsV1"] == {
        "f:spec": {"f:image": {}}
    }


def test_first_apply_to_an_untracked_object_gives_existing_fields_to_before_first_apply() -> None:
    # skipnonapplied.go: the existing fields are attributed to "before-first-apply" first.
    live = stored(widget({"image": "a", "replicas": 1}), [])
    with pytest.raises(ApplyConflict) as info:
        ssa(live, widget({"image": "b"}), "applier", T1)
    assert info.value.message == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using example.com/v1: .spec.image'
    )
    live = ssa(live, widget({"image": "a"}), "applier", T1)
    managed = live["metadata"]["managedFields"]
    assert entry(managed, "before-first-apply", "Update") == {
        "manager": "before-first-apply",
        "operation": "Update",
        "apiVersion": WIDGET_GV,
        "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {".": {}, "f:image": {}, "f:replicas": {}}},
    }


def test_list_type_map_items_merge_by_key_in_smd_order() -> None:
    live = ssa(
        None,
        widget({"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}),
        "one",
        T0,
    )
    live = ssa(
        live,
        widget({"containers": [{"name": "c", "image": "2"}, {"name": "a", "env": {"X": "1"}}]}),
        "two",
        T1,
    )
    # merge.go visitListItems: shared items in the applied order, the live-only item keeps its place.
    assert live["spec"]["containers"] == [
        {"name": "c", "image": "2"},
        {"name": "a", "image": "1", "env": {"X": "1"}},
        {"name": "b", "image": "1"},
    ]
    assert entry(live["metadata"]["managedFields"], "two", "Apply")["fieldsV1"] == {
        "f:spec": {
            "f:containers": {
                'k:{"name":"a"}': {".": {}, "f:env": {"f:X": {}}, "f:name": {}},
                'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}},
            }
        }
    }


def test_list_items_the_applier_dropped_are_removed_unless_shared() -> None:
    config = widget({"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]})
    live = ssa(None, config, "one", T0)
    live = ssa(live, widget({"containers": [{"name": "b", "image": "1"}]}), "two", T1)
    live = ssa(live, widget({"containers": []}), "one", T2)
    # "a" was only one's; "b" is also two's, with all the fields two applied.
    assert live["spec"]["containers"] == [{"name": "b", "image": "1"}]


def test_list_keys_take_their_defaults() -> None:
    # typed/helpers.go getAssociativeKeyDefault: protocol defaults to TCP in the item schema.
    live = ssa(None, widget({"ports": [{"port": 80}]}), "one", T0)
    managed = live["metadata"]["managedFields"][0]["fieldsV1"]
    assert managed == {
        "f:spec": {"f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}}}
    }
    live = ssa(
        live, widget({"ports": [{"port": 80, "protocol": "TCP", "name": "http"}]}), "one", T1
    )
    assert live["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "name": "http"}]


def test_sets_merge_by_value_and_drop_what_the_applier_dropped() -> None:
    live = ssa(None, widget({"tags": ["a", "b"]}), "one", T0)
    live = ssa(live, widget({"tags": ["c", "b"]}), "two", T1)
    assert live["spec"]["tags"] == ["a", "c", "b"]
    live = ssa(live, widget({"tags": ["a"]}), "one", T2)
    assert live["spec"]["tags"] == ["a", "c", "b"]  # b is still two's
    live = ssa(live, widget({"tags": []}), "two", T3)
    assert live["spec"]["tags"] == ["a"]


def test_atomic_lists_and_maps_are_replaced_and_owned_whole() -> None:
    live = ssa(None, widget({"args": ["a", "b"], "selector": {"x": "1", "y": "2"}}), "one", T0)
    with pytest.raises(ApplyConflict) as info:
        ssa(live, widget({"args": ["a"], "selector": {"x": "1"}}), "two", T1)
    assert [c.field for c in info.value.conflicts] == [".spec.args", ".spec.selector"]
    live = ssa(live, widget({"args": ["a"], "selector": {"x": "1"}}), "one", T1)
    assert live["spec"] == {"args": ["a"], "selector": {"x": "1"}}


def test_granular_maps_merge_by_key() -> None:
    live = ssa(None, widget({"config": {"a": "1"}}, labels={"x": "1"}), "one", T0)
    live = ssa(live, widget({"config": {"b": "2"}}, labels={"y": "2"}), "two", T1)
    assert live["spec"]["config"] == {"a": "1", "b": "2"}
    assert live["metadata"]["labels"] == {"x": "1", "y": "2"}


def test_removing_the_last_label_drops_the_labels_map() -> None:
    # ObjectMeta omits empty labels; other emptied containers stay as {} (SMD no longer makes null).
    live = ssa(None, widget({"config": {"a": "1"}}, labels={"x": "1"}), "one", T0)
    live = ssa(live, widget({"config": {"b": "1"}}), "two", T1)
    live = ssa(live, widget(), "one", T2)
    assert "labels" not in live["metadata"]
    assert live["spec"] == {"config": {"b": "1"}}


def test_a_map_an_updater_owned_empty_stays_when_the_applier_lets_go() -> None:
    # addBackDanglingItems compares ToFieldSet before and after, and ToFieldSet owns an empty map
    # (tofieldset.go visitMapItems): spec.config, emptied of the applier's config.a, is still the
    # creator's and stays. (kube's RemoveItems leaves it null, which a non-nullable CRD field then
    # refuses with 422: typed/remove.go doMap sets no output for a map it emptied.)
    created = update_managed_fields(
        None, widget({"config": {}}), WIDGET, "creator", api_version=WIDGET_GV, now=T0
    )
    assert created[0]["fieldsV1"] == {"f:spec": {".": {}, "f:config": {}}}
    live = stored(widget({"config": {}}), created)
    live = ssa(live, widget({"config": {"a": "1"}}), "applier", T1)
    live = ssa(live, widget(), "applier", T2)
    assert live["spec"] == {"config": {}}
    assert [e["manager"] for e in live["metadata"]["managedFields"]] == ["creator"]


def test_an_applier_owns_the_empty_maps_it_sets() -> None:
    # tofieldset.go visitMapItems inserts the path of a null or empty map value, declared field or
    # not; kube 1.34 answers an apply of labels {}, annotations {} and data {} on a ConfigMap with
    # {"f:data": {}, "f:metadata": {"f:annotations": {}, "f:labels": {}}}.
    live = ssa(None, widget({"config": {}, "template": {}}, labels={}), "one", T0)
    assert live["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {"f:labels": {}},
        "f:spec": {"f:config": {}, "f:template": {}},
    }
    # Owned, so dropping it from the next apply removes it; a non-empty map is not owned itself.
    live = ssa(live, widget({"template": {"a": "1"}}), "one", T1)
    assert live["spec"] == {"template": {"a": "1"}}
    assert live["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {"f:template": {"f:a": {}}}
    }


def test_a_map_applied_empty_over_others_fields_is_emptied_of_what_nobody_owns() -> None:
    # The applier owns spec.template whole; an updater's template.a stays while it owns it (kube 1.34
    # answers the same three steps on a CRD of this schema alike).
    live = ssa(None, widget({"template": {}}), "one", T0)
    updated = put(live, widget({"template": {"a": "1"}}), "updater", T1)
    live = ssa(updated, widget({"template": {}}), "one", T2)
    assert live["spec"] == {"template": {"a": "1"}}


def test_an_emptied_map_entry_another_manager_owns_stays_empty() -> None:
    # A map entry (not a declared field) is a field of its own, so it stays while owned.
    created = update_managed_fields(
        None, widget({"extra": {"x": {}}}), WIDGET, "creator", api_version=WIDGET_GV, now=T0
    )
    live = stored(widget({"extra": {"x": {}}}), created)
    live = ssa(live, widget({"extra": {"x": {"a": 1}}}), "applier", T1)
    live = ssa(live, widget(), "applier", T2)
    assert live["spec"] == {"extra": {"x": {}}}


def test_applied_managed_fields_are_rejected() -> None:
    # structuredmerge.go / fieldmanager_test.go TestApplyFailsWithManagedFields.
    config = widget({"image": "a"})
    config["metadata"]["managedFields"] = [{"manager": "test"}]
    with pytest.raises(APIError) as info:
        apply(None, config, WIDGET, "m", api_version=WIDGET_GV, force=False, now=T0)
    assert (info.value.code, info.value.reason, info.value.message) == (
        400,
        "BadRequest",
        "metadata.managedFields must be nil",
    )


def test_applying_another_version_or_kind_is_rejected() -> None:
    # versioncheck.go / TestApplyFailsWithVersionMismatch.
    config = {**widget({"image": "a"}), "apiVersion": "extensions/v1beta1"}
    with pytest.raises(APIError) as info:
        apply(None, config, WIDGET, "m", api_version=WIDGET_GV, kind="Widget", force=False, now=T0)
    assert (info.value.code, info.value.message) == (
        400,
        "invalid object type: extensions/v1beta1, Kind=Widget",
    )
    with pytest.raises(APIError, match=r"invalid object type: /v1, Kind=Pod"):
        apply(
            None,
            {"apiVersion": "v1", "kind": "Pod"},
            WIDGET,
            "m",
            api_version="v1",
            kind="ConfigMap",
            force=False,
            now=T0,
        )


def test_list_items_without_their_key_are_a_typed_patch_error() -> None:
    with pytest.raises(APIError) as info:
        apply(
            None,
            widget({"ports": [{"name": "x"}]}),
            WIDGET,
            "m",
            api_version=WIDGET_GV,
            kind="Widget",
            force=False,
            now=T0,
        )
    assert info.value.code == 500
    assert info.value.message == (
        "failed to create typed patch object (default/w; example.com/v1, Kind=Widget): "
        '.spec.ports: element 0: associative list with keys has an element that omits key field "port" '
        "(and doesn't have default value)"
    )


def test_duplicate_keys_in_the_configuration_are_a_typed_patch_error() -> None:
    config = widget({"containers": [{"name": "a"}, {"name": "a", "image": "x"}], "tags": ["t"]})
    with pytest.raises(
        APIError, match=r'\.spec\.containers: duplicate entries for key \[name="a"\]'
    ):
        apply(None, config, WIDGET, "m", api_version=WIDGET_GV, force=False, now=T0)
    with pytest.raises(
        APIError,
        match=r"\.spec\.tags: element 0: associative list without keys has an element that's a map type",
    ):
        apply(
            None,
            widget({"tags": [{"a": 1}]}),
            WIDGET,
            "m",
            api_version=WIDGET_GV,
            force=False,
            now=T0,
        )


def test_kube_apply_managed_fields_sequence() -> None:
    # TestApplyAlsoCreates then a second applier with the same body: no conflicts.
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default"},
        "data": {"key": "value"},
    }
    live = ssa(None, body, "apply_test", T0, schema=CONFIGMAP, api_version=CONFIGMAP_GV)
    live = ssa(
        live, copy.deepcopy(body), "apply_test_2", T1, schema=CONFIGMAP, api_version=CONFIGMAP_GV
    )
    # The second apply changed nothing, so its entry has no time and sorts first (as time 0).
    assert [(e["manager"], e.get("time")) for e in live["metadata"]["managedFields"]] == [
        ("apply_test_2", None),
        ("apply_test", T0),
    ]


def test_apply_does_not_mutate_its_inputs() -> None:
    created = update_managed_fields(
        None,
        widget({"image": "a", "containers": [{"name": "c", "image": "1"}]}),
        WIDGET,
        "creator",
        api_version=WIDGET_GV,
        now=T0,
    )
    live = stored(widget({"image": "a", "containers": [{"name": "c", "image": "1"}]}), created)
    config = widget({"containers": [{"name": "c", "image": "2"}, {"name": "d"}]}, labels={"a": "b"})
    live_copy, config_copy = copy.deepcopy(live), copy.deepcopy(config)
    apply(live, config, WIDGET, "m", api_version=WIDGET_GV, force=True, now=T1)
    assert live == live_copy
    assert config == config_copy
