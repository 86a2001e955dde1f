"""kubectl's move from client-side to server-side apply
(https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply).

``kubectl apply --server-side`` (field manager ``kubectl``) on an object created by client-side apply:
k8s.io/apimachinery/pkg/util/managedfields/internal lastappliedmanager.go lets it take the fields whose
live value is still the one recorded in ``kubectl.kubernetes.io/last-applied-configuration`` without
``--force-conflicts``, and lastappliedupdater.go rewrites that annotation; kubectl then applies the
annotation as ``kubectl-last-applied``, rewrites managedFields with a JSON patch
(k8s.io/client-go/util/csaupgrade ``UpgradeManagedFields``: the client-side apply entry merged into
the ``kubectl`` Apply entry), and applies again.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from fm_support import CRONTAB_GV, T0, T1, T2, T3, crontab, entry, stored

from apiserver.fieldmanager import (
    LAST_APPLIED_ANNOTATION,
    ApplyConflict,
    FieldSet,
    apply,
    update_managed_fields,
)


def last_applied(obj: dict[str, Any]) -> str:
    # kubectl's annotation: the configuration without the annotation, as Go encodes it, plus "\n".
    return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"


def client_side_apply_create(schema: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(config)
    obj["metadata"]["annotations"] = {LAST_APPLIED_ANNOTATION: last_applied(config)}
    managed = update_managed_fields(
        None, obj, schema, "kubectl-client-side-apply", api_version=CRONTAB_GV, now=T0
    )
    return stored(obj, managed)


def ssa(
    schema: dict[str, Any],
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    now: str,
    force: bool = False,
) -> dict[str, Any]:
    obj, managed = apply(
        live, config, schema, manager, api_version=CRONTAB_GV, kind="CronTab", force=force, now=now
    )
    return stored(obj, managed)


def test_server_side_apply_takes_over_client_side_applied_fields(
    crontab_schema: dict[str, Any],
) -> None:
    config = crontab({"cronSpec": "* * * * */5", "image": "img:1", "replicas": 1})
    live = client_side_apply_create(crontab_schema, config)
    changed = crontab({"cronSpec": "* * * * */5", "image": "img:2", "replicas": 1})

    # Any other manager conflicts on the image kubectl-client-side-apply set...
    with pytest.raises(ApplyConflict, match=r"\.spec\.image"):
        ssa(crontab_schema, live, changed, "someone-else", T1)
    # ...but "kubectl" may take it: the live value is still the last-applied one.
    live = ssa(crontab_schema, live, changed, "kubectl", T1)
    assert live["spec"]["image"] == "img:2"
    # lastappliedupdater.go: the annotation now records what was applied.
    assert live["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] == last_applied(changed)
    managed = live["metadata"]["managedFields"]
    assert entry(managed, "kubectl", "Apply")["fieldsV1"] == {
        "f:spec": {"f:cronSpec": {}, "f:image": {}, "f:replicas": {}}
    }
    assert entry(managed, "kubectl-client-side-apply", "Update")["fieldsV1"] == {
        "f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED_ANNOTATION}": {}}},
        "f:spec": {".": {}, "f:cronSpec": {}, "f:replicas": {}},
    }

    # 1. kubectl applies the annotation alone as kubectl-last-applied.
    annotation_only = crontab()
    annotation_only["metadata"]["annotations"] = {LAST_APPLIED_ANNOTATION: last_applied(changed)}
    live = ssa(crontab_schema, live, annotation_only, "kubectl-last-applied", T2)

    # 2. kubectl rewrites managedFields with a JSON patch (csaupgrade), locked by resourceVersion.
    upgraded: list[dict[str, Any]] = []
    csa = entry(live["metadata"]["managedFields"], "kubectl-client-side-apply", "Update")
    for item in live["metadata"]["managedFields"]:
        if item is csa:
            continue
        item = copy.deepcopy(item)
        if item["manager"] == "kubectl" and item["operation"] == "Apply":
            merged = FieldSet.from_fields_v1(item["fieldsV1"]).union(
                FieldSet.from_fields_v1(csa["fieldsV1"])
            )
            item["fieldsV1"] = merged.to_fields_v1()
        upgraded.append(item)
    patched = copy.deepcopy(live)
    patched["metadata"]["managedFields"] = upgraded
    patched["metadata"]["resourceVersion"] = "9"
    managed = update_managed_fields(
        live, patched, crontab_schema, "kubectl", api_version=CRONTAB_GV, now=T3
    )
    assert managed == upgraded  # taken as given: the patch changed nothing else
    live = stored(patched, managed)

    # 3. The apply again: no conflicts, the object does not change, the annotation stays
    # (kubectl-last-applied owns it, so it is not pruned although kubectl's set no longer has it),
    # and kubectl owns exactly what it applied, at the time of its last change.
    again = ssa(crontab_schema, live, copy.deepcopy(changed), "kubectl", T3)
    assert {**again, "metadata": {}} == {**live, "metadata": {}}
    assert {k: v for k, v in again["metadata"].items() if k != "managedFields"} == {
        k: v for k, v in live["metadata"].items() if k != "managedFields"
    }
    assert entry(again["metadata"]["managedFields"], "kubectl", "Apply") == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": CRONTAB_GV,
        "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:cronSpec": {}, "f:image": {}, "f:replicas": {}}},
    }


def test_fields_changed_since_the_client_side_apply_still_conflict(
    crontab_schema: dict[str, Any],
) -> None:
    config = crontab({"cronSpec": "* * * * */5", "image": "img:1", "replicas": 1})
    live = client_side_apply_create(crontab_schema, config)
    edited = copy.deepcopy(live)
    edited["spec"]["replicas"] = 5
    live = stored(
        edited,
        update_managed_fields(
            live, edited, crontab_schema, "kubectl-edit", api_version=CRONTAB_GV, now=T1
        ),
    )
    changed = crontab({"cronSpec": "* * * * */5", "image": "img:2", "replicas": 2})
    with pytest.raises(ApplyConflict) as info:
        ssa(crontab_schema, live, changed, "kubectl", T2)
    # The image was allowed (live value = last applied); replicas was edited since, so it is not.
    assert info.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using stable.example.com/v1: '
        ".spec.replicas"
    )


def test_no_annotation_update_without_one_or_for_other_managers(
    crontab_schema: dict[str, Any],
) -> None:
    config = crontab({"cronSpec": "* * * * */5", "image": "img:1"})
    live = ssa(crontab_schema, None, config, "kubectl", T0)
    assert "annotations" not in live["metadata"]
    csa = client_side_apply_create(crontab_schema, config)
    other = ssa(
        crontab_schema,
        csa,
        crontab({"cronSpec": "* * * * */5", "image": "img:1", "replicas": 3}),
        "helm",
        T1,
    )
    assert other["metadata"]["annotations"] == csa["metadata"]["annotations"]


def test_oversized_annotation_is_dropped(crontab_schema: dict[str, Any]) -> None:
    # lastapplied.go SetLastApplied: past the annotation size limit the annotation is removed.
    config = crontab({"cronSpec": "* * * * */5", "image": "img:1"})
    live = client_side_apply_create(crontab_schema, config)
    big = crontab({"cronSpec": "* * * * */5", "image": "x" * (300 * 1024)})
    result = ssa(crontab_schema, live, big, "kubectl", T1, force=True)
    assert LAST_APPLIED_ANNOTATION not in result["metadata"].get("annotations", {})
