"""Real-world shaped cases on apps/v1 Deployment, with the schema kube-apiserver publishes
(tests/fixtures/kubernetes/openapi-v3/apis__apps__v1_openapi.json, ``$ref``s resolved):
``containers`` is a list-type map keyed by ``name``, ``ports`` one keyed by ``containerPort`` and
``protocol``, ``selector`` an atomic ``LabelSelector``, ``maxSurge`` an int-or-string.

The cases follow kube's test/integration/apiserver/apply/apply_test.go (``TestApplyRemoveContainerPort``,
``TestApplyConvertsManagedFieldsVersion``, ``TestApplyUpdateApplyConflictForced``) and the
ownership-transfer walk-through of the server-side apply documentation (a controller taking over
``replicas``).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from fm_support import T0, T1, T2, T3, deployment, entry, stored

from apiserver.fieldmanager import ApplyConflict, apply, update_managed_fields

GV = "apps/v1"


def ssa(
    schema: dict[str, Any],
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    now: str,
    force: bool = False,
) -> dict[str, Any]:
    obj, managed = apply(
        live, config, schema, manager, api_version=GV, kind="Deployment", force=force, now=now
    )
    return stored(obj, managed)


def write(
    schema: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any], manager: str, now: str
) -> dict[str, Any]:
    return stored(new, update_managed_fields(old, new, schema, manager, api_version=GV, now=now))


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result = obj["spec"]["template"]["spec"]["containers"]
    assert isinstance(result, list)
    return result


def test_applied_deployment_fields(deployment_schema: dict[str, Any]) -> None:
    obj = ssa(deployment_schema, None, deployment(), "apply_test", T0)
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"nginx"}': {
                            ".": {},
                            "f:image": {},
                            "f:name": {},
                            "f:ports": {
                                'k:{"containerPort":80,"protocol":"TCP"}': {
                                    ".": {},
                                    "f:containerPort": {},
                                    "f:protocol": {},
                                }
                            },
                        }
                    }
                },
            },
        },
    }


def test_kube_apply_remove_container_port(deployment_schema: dict[str, Any]) -> None:
    # TestApplyRemoveContainerPort: re-applying without the ports removes them.
    live = ssa(deployment_schema, None, deployment(), "apply_test", T0)
    config = deployment()
    del containers(config)[0]["ports"]
    live = ssa(deployment_schema, live, config, "apply_test", T1)
    assert "ports" not in containers(live)[0]


def test_port_keys_default_their_protocol(deployment_schema: dict[str, Any]) -> None:
    config = deployment(
        containers=[{"name": "nginx", "image": "x", "ports": [{"containerPort": 80}]}]
    )
    live = ssa(deployment_schema, None, config, "apply_test", T0)
    fields = live["metadata"]["managedFields"][0]["fieldsV1"]
    ports = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}'][
        "f:ports"
    ]
    assert list(ports) == ['k:{"containerPort":80,"protocol":"TCP"}']


def test_client_side_applied_deployment_conflicts_on_the_image(
    deployment_schema: dict[str, Any],
) -> None:
    live = write(
        deployment_schema, None, deployment(image="nginx:1.25"), "kubectl-client-side-apply", T0
    )
    with pytest.raises(ApplyConflict) as info:
        ssa(deployment_schema, live, deployment(image="nginx:1.26"), "my-applier", T1)
    assert info.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        '.spec.template.spec.containers[name="nginx"].image'
    )
    live = ssa(
        deployment_schema, live, deployment(image="nginx:1.26"), "my-applier", T1, force=True
    )
    assert containers(live)[0]["image"] == "nginx:1.26"
    csa = entry(live["metadata"]["managedFields"], "kubectl-client-side-apply", "Update")
    item = csa["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert "f:image" not in item and "f:name" in item


def test_a_controller_takes_over_replicas(deployment_schema: dict[str, Any]) -> None:
    # The SSA docs' transfer: the HPA changes replicas (an Update), the applier drops replicas from
    # its configuration, and replicas stay at the controller's value.
    live = ssa(deployment_schema, None, deployment(replicas=3), "kubectl", T0)
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 7
    live = write(deployment_schema, live, scaled, "kube-controller-manager", T1)
    assert entry(live["metadata"]["managedFields"], "kube-controller-manager", "Update")[
        "fieldsV1"
    ] == {"f:spec": {"f:replicas": {}}}
    # Applying replicas again would now conflict with the controller...
    with pytest.raises(
        ApplyConflict, match=r'"kube-controller-manager" using apps/v1: \.spec\.replicas'
    ):
        ssa(deployment_schema, live, deployment(replicas=3), "kubectl", T2)
    # ...so the applier stops setting it, and it keeps the controller's value.
    live = ssa(deployment_schema, live, deployment(replicas=None), "kubectl", T2)
    assert live["spec"]["replicas"] == 7


def test_a_sidecar_injected_by_another_applier_survives(deployment_schema: dict[str, Any]) -> None:
    live = ssa(deployment_schema, None, deployment(), "kubectl", T0)
    sidecar = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deployment", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "proxy:1"}]}}},
    }
    live = ssa(deployment_schema, live, sidecar, "injector", T1)
    assert [c["name"] for c in containers(live)] == ["nginx", "sidecar"]
    live = ssa(deployment_schema, live, deployment(image="nginx:1.26"), "kubectl", T2)
    assert [(c["name"], c["image"]) for c in containers(live)] == [
        ("nginx", "nginx:1.26"),
        ("sidecar", "proxy:1"),
    ]
    # The injector stops injecting: its container goes, nginx stays.
    live = ssa(deployment_schema, live, {**sidecar, "spec": {}}, "injector", T3)
    assert [c["name"] for c in containers(live)] == ["nginx"]


def test_kube_apply_converts_managed_fields_version(deployment_schema: dict[str, Any]) -> None:
    # TestApplyConvertsManagedFieldsVersion: created with managedFields in the body (an applier at
    # another version, one path misspelt), then applied by that applier.
    created = deployment(replicas=None, containers=[{"name": "nginx", "image": "nginx:latest"}])
    created["metadata"]["managedFields"] = [
        {
            "manager": "sidecar_controller",
            "operation": "Apply",
            "apiVersion": "extensions/v1beta1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:sidecar_version": {}}},
                "f:spec": {
                    "f:template": {
                        "f: spec": {
                            "f:containers": {'k:{"name":"sidecar"}': {".": {}, "f:image": {}}}
                        }
                    }
                },
            },
        }
    ]
    live = write(deployment_schema, None, created, "Go-http-client", T0)
    config = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deployment", "labels": {"sidecar_version": "release"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "sidecar", "image": "sidecar:latest"}]}}
        },
    }
    live = ssa(deployment_schema, live, config, "sidecar_controller", T1)
    managed = live["metadata"]["managedFields"]
    assert len(managed) == 2
    sidecar = entry(managed, "sidecar_controller", "Apply")
    assert sidecar["apiVersion"] == "apps/v1"
    assert json.dumps(sidecar["fieldsV1"], separators=(",", ":")) == (
        r'{"f:metadata":{"f:labels":{"f:sidecar_version":{}}},"f:spec":{"f:template":{"f:spec":'
        r'{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}}}'
    )


def test_rolling_update_int_or_string_is_a_leaf(deployment_schema: dict[str, Any]) -> None:
    config = deployment()
    config["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}
    live = ssa(deployment_schema, None, config, "kubectl", T0)
    config["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = 2
    with pytest.raises(ApplyConflict, match=r"\.spec\.strategy\.rollingUpdate\.maxSurge"):
        ssa(deployment_schema, live, config, "other", T1)


def big_deployment(n: int, image: str = "img:1") -> dict[str, Any]:
    return deployment(
        containers=[
            {
                "name": f"c{i}",
                "image": image,
                "env": [{"name": f"E{j}", "value": str(j)} for j in range(10)],
                "ports": [{"containerPort": 1000 + i}],
            }
            for i in range(n)
        ]
    )


def test_update_cost_grows_linearly(deployment_schema: dict[str, Any]) -> None:
    """Runs on every write: a big object must not be walked more than a few times. Four times the containers
    cost about four times as much (quadratic would be sixteen). The two sizes are timed in turns, the best of
    each kept, so that the load of a busy machine weighs on both alike."""

    def timer(n: int) -> Callable[[], float]:
        live = write(deployment_schema, None, big_deployment(n), "creator", T0)
        new = copy.deepcopy(live)
        containers(new)[-1]["image"] = "img:2"

        def seconds() -> float:
            applied = big_deployment(n, "img:3")
            start = time.perf_counter()
            update_managed_fields(live, new, deployment_schema, "editor", api_version=GV, now=T1)
            apply(live, applied, deployment_schema, "ed", api_version=GV, force=True, now=T2)
            return time.perf_counter() - start

        return seconds

    small, large = timer(100), timer(400)
    best_small = best_large = float("inf")
    for _ in range(5):
        best_small, best_large = min(best_small, small()), min(best_large, large())
    assert best_large < best_small * 4 * 3  # linear, with generous slack for timing noise
    assert best_large < 10.0
