"""``update_managed_fields``: what kube-apiserver records on every create, update and non-apply patch.

Checked against k8s.io/apimachinery/pkg/util/managedfields/internal (fieldmanager.go
``decodeLiveOrNew``/``isResetManagedFields``, managedfieldsupdater.go, skipnonapplied.go,
capmanagers.go, stripmeta.go, managedfields.go ``sortEncodedManagedFields``), their tests
(fieldmanager_test.go ``TestResetManagedFieldsEmptyList``/``EmptyItem``, ``TestNoOpChanges``,
``TestNoTrackManagedFieldsForClientSideApply``, capmanagers_test.go) and
sigs.k8s.io/structured-merge-diff merge/update.go ``Updater.Update``.
"""

from __future__ import annotations

import copy
from typing import Any

from fm_schemas import CONFIGMAP, CONFIGMAP_GV, WIDGET, WIDGET_GV, widget
from fm_support import CRONTAB_GV, T0, T1, T2, T3, crontab, entry, stored

from apiserver.fieldmanager import MAX_UPDATE_MANAGERS, update_managed_fields


def update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    now: str,
    schema: dict[str, Any] = WIDGET,
    api_version: str = WIDGET_GV,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    return update_managed_fields(
        old, new, schema, manager, api_version=api_version, now=now, **kwargs
    )


def write(
    old: dict[str, Any] | None, new: dict[str, Any], manager: str, now: str, **kwargs: Any
) -> dict[str, Any]:
    """Run a write and return the object as stored, managedFields included."""
    return stored(new, update(old, new, manager, now, **kwargs))


def test_create_of_a_crontab_owns_every_field_it_sets(crontab_schema: dict[str, Any]) -> None:
    # A CR is created from an empty object, so granular nodes it adds are owned themselves (".").
    obj = crontab(
        {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"},
        labels={"app": "x"},
        annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}\n"},
    )
    managed = update(
        None, obj, "kubectl-client-side-apply", T0, schema=crontab_schema, api_version=CRONTAB_GV
    )
    assert managed == [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": "stable.example.com/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:annotations": {
                        ".": {},
                        "f:kubectl.kubernetes.io/last-applied-configuration": {},
                    },
                    "f:labels": {".": {}, "f:app": {}},
                },
                "f:spec": {".": {}, "f:cronSpec": {}, "f:image": {}},
            },
        }
    ]


def test_system_metadata_is_never_owned() -> None:
    # stripmeta.go: apiVersion, kind, metadata itself and its system fields are stripped.
    obj = widget({"image": "a"}, uid="u", resourceVersion="7", generation=3, generateName="w-")
    obj["metadata"]["creationTimestamp"] = T0
    managed = update(None, obj, "creator", T0)
    assert managed[0]["fieldsV1"] == {
        "f:metadata": {"f:generateName": {}},
        "f:spec": {".": {}, "f:image": {}},
    }


def test_two_managers_editing_different_fields_each_own_theirs() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    v2 = write(v1, widget({"image": "a", "replicas": 2}), "scaler", T1)
    assert v2["metadata"]["managedFields"] == [
        {
            "manager": "creator",
            "operation": "Update",
            "apiVersion": WIDGET_GV,
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {".": {}, "f:image": {}}},
        },
        {
            "manager": "scaler",
            "operation": "Update",
            "apiVersion": WIDGET_GV,
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        },
    ]


def test_changing_a_field_takes_it_from_its_owner() -> None:
    v1 = write(None, widget({"image": "a", "replicas": 1}), "creator", T0)
    v2 = write(v1, widget({"image": "b", "replicas": 1}), "editor", T1)
    managed = v2["metadata"]["managedFields"]
    assert entry(managed, "creator", "Update")["fieldsV1"] == {
        "f:spec": {".": {}, "f:replicas": {}}
    }
    assert entry(managed, "editor", "Update")["fieldsV1"] == {"f:spec": {"f:image": {}}}


def test_an_entry_left_with_nothing_is_dropped() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    v1["metadata"]["managedFields"][0]["fieldsV1"] = {"f:spec": {"f:image": {}}}
    v2 = write(v1, widget({"image": "b"}), "editor", T1)
    assert [e["manager"] for e in v2["metadata"]["managedFields"]] == ["editor"]


def test_setting_the_same_value_takes_nothing() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    v2 = write(v1, widget({"image": "a"}), "other", T1)
    assert v2["metadata"]["managedFields"] == v1["metadata"]["managedFields"]


def test_removed_fields_leave_every_owner() -> None:
    v1 = write(None, widget({"image": "a", "replicas": 1}), "creator", T0)
    v2 = write(v1, widget({"image": "a", "replicas": 2}), "scaler", T1)
    v3 = write(v2, widget({"image": "a"}), "pruner", T2)
    managed = v3["metadata"]["managedFields"]
    # scaler owned nothing else, so its entry goes; pruner changed nothing it could own.
    assert [e["manager"] for e in managed] == ["creator"]
    assert managed[0]["fieldsV1"] == {"f:spec": {".": {}, "f:image": {}}}
    assert managed[0]["time"] == T0


def test_updates_by_one_manager_accumulate_and_take_the_latest_time() -> None:
    # test/integration/apiserver/apply TestApplyManagedFields: an apply, then two merge patches by
    # "updater"; the Update entry is one, with both fields and the second patch's time.
    from apiserver.fieldmanager import apply

    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
        "data": {"key": "value"},
    }
    live, _ = apply(
        None, applied, CONFIGMAP, "apply_test", api_version=CONFIGMAP_GV, force=False, now=T0
    )
    live = stored(live, live["metadata"]["managedFields"])
    patched = copy.deepcopy(live)
    patched["data"]["new-key"] = "value"
    live = write(live, patched, "updater", T1, schema=CONFIGMAP, api_version=CONFIGMAP_GV)
    patched = copy.deepcopy(live)
    patched["data"]["key"] = "new value"
    live = write(live, patched, "updater", T2, schema=CONFIGMAP, api_version=CONFIGMAP_GV)
    assert live["metadata"]["managedFields"] == [
        {
            "manager": "apply_test",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:test-label": {}}}},
        },
        {
            "manager": "updater",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T2,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:key": {}, "f:new-key": {}}},
        },
    ]


def test_noop_update_by_a_new_manager_records_nothing() -> None:
    # fieldmanager_test.go TestNoOpChanges: "No-op update has changed the object".
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    assert update(v1, copy.deepcopy(v1), "someone", T1) == v1["metadata"]["managedFields"]


def test_unchanged_entries_are_written_back_as_the_same_objects() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    v2 = write(v1, widget({"image": "a", "replicas": 1}), "scaler", T1)
    v3 = update(v2, widget({"image": "a", "replicas": 2}), "scaler", T2)
    creator_before = entry(v2["metadata"]["managedFields"], "creator", "Update")
    creator_after = entry(v3, "creator", "Update")
    assert creator_after["fieldsV1"] is creator_before["fieldsV1"]


def test_an_object_without_managed_fields_stays_untracked_until_applied() -> None:
    # skipnonapplied.go: only a create (or an apply) starts tracking.
    v1 = stored(widget({"image": "a"}), [])
    assert update(v1, widget({"image": "b"}), "editor", T1) == []


def test_empty_list_resets_managed_fields() -> None:
    # fieldmanager_test.go TestResetManagedFieldsEmptyList.
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    new = copy.deepcopy(v1)
    new["metadata"]["managedFields"] = []
    new["spec"]["image"] = "b"
    assert update(v1, new, "update_manager", T1) == []


def test_list_with_one_empty_entry_resets_managed_fields() -> None:
    # fieldmanager_test.go TestResetManagedFieldsEmptyItem; kube's docs' way to strip them.
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    new = copy.deepcopy(v1)
    new["metadata"]["managedFields"] = [{}]
    assert update(v1, new, "update_manager", T1) == []


def test_client_supplied_managed_fields_replace_the_stored_ones() -> None:
    # decodeLiveOrNew: managedFields in the request that decode are used instead of the stored ones
    # (kubectl's migration from client-side apply rewrites them with a JSON patch).
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    new = copy.deepcopy(v1)
    new["metadata"]["resourceVersion"] = "2"
    new["metadata"]["managedFields"] = [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": WIDGET_GV,
            "time": "2024-01-01T02:00:00+02:00",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:image": {}}},
            "unknownField": "dropped",
        }
    ]
    assert update(v1, new, "kubectl", T1) == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": WIDGET_GV,
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:image": {}}},
        }
    ]


def test_client_supplied_managed_fields_then_the_write_is_recorded() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    new = copy.deepcopy(v1)
    new["spec"]["image"] = "b"
    new["metadata"]["managedFields"] = [
        {
            "manager": "other",
            "operation": "Update",
            "apiVersion": WIDGET_GV,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:image": {}, "f:replicas": {}}},
        }
    ]
    managed = update(v1, new, "editor", T1)
    assert [(e["manager"], e["fieldsV1"]) for e in managed] == [
        ("other", {"f:spec": {"f:replicas": {}}}),
        ("editor", {"f:spec": {"f:image": {}}}),
    ]


def test_undecodable_client_managed_fields_are_ignored() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    for bad in (
        [{"manager": "x", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}],
        [{"manager": "x", "operation": "Update", "fieldsType": "FieldsV1"}],
        [{"manager": "x", "operation": "Update", "apiVersion": "v1"}],
        [{"manager": "x", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"}],
        [{"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": []}],
        [{"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "time": "soon"}],
    ):
        new = copy.deepcopy(v1)
        new["metadata"]["managedFields"] = bad
        assert update(v1, new, "editor", T1) == v1["metadata"]["managedFields"], bad


def test_subresource_writes_ignore_managed_fields_in_the_request() -> None:
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    new = copy.deepcopy(v1)
    new["metadata"]["managedFields"] = []
    new["status"] = {"phase": "Running"}
    managed = update(v1, new, "kubelet", T1, subresource="status", ignored_fields=["spec"])
    assert managed[-1] == {
        "manager": "kubelet",
        "operation": "Update",
        "apiVersion": WIDGET_GV,
        "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {".": {}, "f:phase": {}}},
        "subresource": "status",
    }
    assert managed[0] == v1["metadata"]["managedFields"][0]


def test_ignored_fields_are_not_owned() -> None:
    # The strategy's reset fields (status on the main resource) are excluded like
    # Comparison.ExcludeFields.
    obj = widget({"image": "a"})
    obj["status"] = {"phase": "Pending"}
    managed = update(None, obj, "creator", T0, ignored_fields=["status"])
    assert managed[0]["fieldsV1"] == {"f:spec": {".": {}, "f:image": {}}}


def test_an_empty_manager_name_is_unknown() -> None:
    assert update(None, widget({"image": "a"}), "", T0)[0]["manager"] == "unknown"


def test_entries_are_sorted_like_kube() -> None:
    # sortEncodedManagedFields: operation, then time, then manager, apiVersion, subresource.
    v1 = write(None, widget({"image": "a"}), "zeta", T2)
    v2 = write(v1, widget({"image": "a", "replicas": 1}), "alpha", T1)
    v3 = write(v2, widget({"image": "a", "replicas": 1, "paused": True}), "beta", T1)
    assert [e["manager"] for e in v3["metadata"]["managedFields"]] == ["alpha", "beta", "zeta"]


def test_more_than_ten_updaters_are_merged_into_ancient_changes() -> None:
    # capmanagers.go: the oldest Update entries of a version are merged until ten remain.
    obj = stored(widget({"config": {}}), [])
    managed: list[dict[str, Any]] = []
    for i in range(MAX_UPDATE_MANAGERS + 2):
        new = copy.deepcopy(obj)
        new["spec"]["config"][f"k{i}"] = "v"
        now = f"2024-01-01T00:00:{i:02d}Z"
        managed = update(obj if i else None, new, f"m{i:02d}", now)
        obj = stored(new, managed)
    assert len(managed) == MAX_UPDATE_MANAGERS
    ancient = entry(managed, "ancient-changes", "Update")
    assert ancient["fieldsV1"] == {
        "f:spec": {".": {}, "f:config": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}}
    }
    assert ancient["time"] == "2024-01-01T00:00:02Z"
    assert "m00" not in {e["manager"] for e in managed}


def test_lists_maps_and_sets_are_owned_by_item() -> None:
    v1 = write(
        None,
        widget(
            {
                "tags": ["a", "b"],
                "ports": [{"port": 80, "name": "http"}],
                "containers": [{"name": "main", "image": "x", "env": {"A": "1"}}],
                "args": ["--x"],
                "selector": {"app": "w"},
            },
            finalizers=["example.com/f"],
            ownerReferences=[{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u1"}],
        ),
        "creator",
        T0,
    )
    assert v1["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {
            "f:finalizers": {".": {}, 'v:"example.com/f"': {}},
            "f:ownerReferences": {".": {}, 'k:{"uid":"u1"}': {}},
        },
        "f:spec": {
            ".": {},
            "f:args": {},
            "f:containers": {
                ".": {},
                'k:{"name":"main"}': {
                    ".": {},
                    "f:env": {".": {}, "f:A": {}},
                    "f:image": {},
                    "f:name": {},
                },
            },
            "f:ports": {
                ".": {},
                'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:name": {}, "f:port": {}},
            },
            "f:selector": {},
            "f:tags": {".": {}, 'v:"a"': {}, 'v:"b"': {}},
        },
    }


def test_changing_an_atomic_list_takes_the_whole_list() -> None:
    v1 = write(None, widget({"args": ["a", "b"], "tags": ["x"]}), "creator", T0)
    v2 = write(v1, widget({"args": ["a", "c"], "tags": ["x", "y"]}), "editor", T1)
    assert entry(v2["metadata"]["managedFields"], "editor", "Update")["fieldsV1"] == {
        "f:spec": {"f:args": {}, "f:tags": {'v:"y"': {}}}
    }
    assert entry(v2["metadata"]["managedFields"], "creator", "Update")["fieldsV1"] == {
        "f:spec": {".": {}, "f:tags": {".": {}, 'v:"x"': {}}}
    }


def test_preserved_unknown_fields_are_deduced() -> None:
    # Unknown fields below x-kubernetes-preserve-unknown-fields: maps granular, lists atomic.
    v1 = write(None, widget({"extra": {"a": {"b": 1}, "l": [1, 2]}}), "creator", T0)
    assert v1["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {
            ".": {},
            "f:extra": {".": {}, "f:a": {".": {}, "f:b": {}}, "f:l": {}},
        }
    }


def test_an_object_that_cannot_be_typed_keeps_its_managed_fields() -> None:
    # UpdateNoErrors: an error keeps the stored managedFields (a list-map item without its key).
    v1 = write(None, widget({"image": "a"}), "creator", T0)
    bad = widget({"image": "b", "containers": [{"image": "no-name"}]})
    assert update(v1, bad, "editor", T1) == v1["metadata"]["managedFields"]


def test_time_is_written_as_metav1_time() -> None:
    managed = update(None, widget({"image": "a"}), "creator", "2024-01-01T01:00:00.123456+01:00")
    assert managed[0]["time"] == T0


def test_create_with_managed_fields_in_the_body_keeps_them() -> None:
    # TestApplyConvertsManagedFieldsVersion creates a Deployment with managedFields in the body: they
    # are kept for fields the create does not set, while what it sets goes to the creator.
    obj = widget({"image": "a", "replicas": 1})
    obj["metadata"]["managedFields"] = [
        {
            "manager": "sidecar",
            "operation": "Apply",
            "apiVersion": WIDGET_GV,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:paused": {}, "f:replicas": {}}},
        }
    ]
    managed = update(None, obj, "creator", T3)
    assert [(e["manager"], e["operation"], e["fieldsV1"]) for e in managed] == [
        ("sidecar", "Apply", {"f:spec": {"f:paused": {}}}),
        ("creator", "Update", {"f:spec": {".": {}, "f:image": {}, "f:replicas": {}}}),
    ]
