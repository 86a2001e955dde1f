"""A kopf operator that installs its own CustomResourceDefinition at start (as operators shipped without a
Helm chart do), run by tests/e2e/test_crd_runtime.py. kopf finds the kind once it is served, through its
watch on CustomResourceDefinitions, and handles its objects; a create writes status.observed."""

from __future__ import annotations

from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "kopf.runtime.example", "v1", "widgets"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "kind": "Widget", "shortNames": ["wd"]},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


@kopf.on.startup()
def install(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.networking.error_backoffs = [0.2] * 50
    settings.watching.reconnect_backoff = 0.1
    kubernetes.config.load_kube_config()
    try:
        kubernetes.client.ApiextensionsV1Api().create_custom_resource_definition(CRD)
    except kubernetes.client.ApiException as error:
        if error.status != 409:
            raise


@kopf.on.create(GROUP, VERSION, PLURAL, id="observed")
def observe(spec: kopf.Spec, **_: Any) -> int:
    size: int = spec.get("size", 0)
    return size
