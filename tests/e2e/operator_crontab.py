"""A small kopf operator for CronTabs, run by tests/e2e/test_kopf_operator.py as
`python -m kopf run --standalone -A tests/e2e/operator_crontab.py`.

On create it posts an Event and reports into status; having a delete handler makes kopf put its finalizer on
every CronTab and release it once the handler has run. kopf stores a handler's return value under
`status.<handler id>`: the CronTab schema prunes unknown status fields (as a structural CRD schema does in
kube), so the create handler's id is `replicas`, a field the schema declares.
"""

from __future__ import annotations

from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "stable.example.com", "v1", "crontabs"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # retry quickly while the API server restarts, so the tests stay short
    settings.networking.error_backoffs = [0.2] * 50
    settings.watching.reconnect_backoff = 0.1


@kopf.on.create(GROUP, VERSION, PLURAL, id="replicas")
def reconcile(body: kopf.Body, spec: kopf.Spec, name: str, patch: kopf.Patch, **_: Any) -> int:
    kopf.info(body, reason="Reconciled", message=f"CronTab {name} runs {spec.get('image')}")
    patch.status["labelSelector"] = f"crontab={name}"
    replicas: int = spec.get("replicas", 0)
    return replicas  # lands in status.replicas


@kopf.on.create(GROUP, VERSION, PLURAL, id="child", labels={"adopt": "true"})
def child(body: kopf.Body, name: str, namespace: str, **_: Any) -> None:
    """A ConfigMap the CronTab owns (kopf.adopt: ownerReferences with controller and blockOwnerDeletion),
    which the server's garbage collector removes with its owner."""
    configmap: dict[str, Any] = {"metadata": {"name": f"{name}-child"}, "data": {"owner": name}}
    kopf.adopt(configmap, owner=body)
    kubernetes.config.load_kube_config()
    with kubernetes.client.ApiClient() as api:
        kubernetes.client.CoreV1Api(api).create_namespaced_config_map(namespace, configmap)


@kopf.on.delete(GROUP, VERSION, PLURAL)
def release(body: kopf.Body, name: str, **_: Any) -> None:
    kopf.info(body, reason="Finalized", message=f"CronTab {name} released")
