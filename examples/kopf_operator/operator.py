"""A kopf operator written against the typed clients: for each CronTab it keeps a ConfigMap
`<name>-schedule` holding the CronTab's schedule and image, owned by the CronTab (so the garbage collector
removes it with its owner).

The operator reads ConfigMaps from an informer's cache (a lister: no request per event) and writes through
the typed client; both run on kopf's own event loop. Run it with
`KUBECONFIG=... python -m kopf run --standalone --namespace NS examples/kopf_operator/operator.py`.
"""

from __future__ import annotations

from typing import Any

import kopf

from apiclient import AsyncConnection, Informer, load_kubeconfig
from apiclient.errors import AlreadyExists
from generated.core.v1.client import configmaps_async
from generated.core.v1.models import ConfigMap
from generated.meta.v1.models import ObjectMeta, OwnerReference

GROUP, VERSION, PLURAL = "stable.example.com", "v1", "crontabs"
MANAGED_BY = {"app.kubernetes.io/managed-by": "crontab-operator"}


class State:
    """The operator's connection and ConfigMap informer, made at start-up on kopf's loop."""

    connection: AsyncConnection
    informer: Informer[ConfigMap]


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    settings.watching.reconnect_backoff = 0.1
    state = State()
    state.connection = AsyncConnection(load_kubeconfig())
    state.informer = Informer(
        configmaps_async(state.connection), None, label_selector="app.kubernetes.io/managed-by"
    )
    state.informer.start()
    await state.informer.wait_for_cache_sync(timeout=30)
    memo.state = state


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    await memo.state.informer.stop()
    await memo.state.connection.aclose()


@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
async def schedule(
    body: kopf.Body, spec: kopf.Spec, name: str, namespace: str, memo: kopf.Memo, **_: Any
) -> str:
    """The CronTab's ConfigMap, created or brought up to date; returns its name (in status.schedule...)."""
    state: State = memo.state
    wanted = {"schedule": str(spec.get("cronSpec", "")), "image": str(spec.get("image", ""))}
    child = f"{name}-schedule"
    cached = state.informer.lister().get(child, namespace)
    configmaps = configmaps_async(state.connection)
    if cached is None:
        owner = OwnerReference(
            api_version=body["apiVersion"],
            kind=body["kind"],
            name=name,
            uid=body["metadata"]["uid"],
            controller=True,
            block_owner_deletion=True,
        )
        configmap = ConfigMap(
            metadata=ObjectMeta(
                name=child, namespace=namespace, labels=MANAGED_BY, owner_references=[owner]
            ),
            data=wanted,
        )
        try:
            await configmaps.create(configmap)
        except AlreadyExists:  # created before the cache saw it: update it below
            cached = await configmaps.get(child, namespace)
    if cached is not None and cached.data != wanted:
        cached.data = wanted
        await configmaps.update(cached)
    return child
