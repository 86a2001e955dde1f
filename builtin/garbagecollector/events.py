"""The garbage collector's reports: a Warning Event on a dependent whose owner reference points outside its
namespace (kube's GraphBuilder.reportInvalidNamespaceOwnerRef, reason OwnerRefInvalidNamespace), written once
per reference through the Event store like any other write."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from apiserver.machinery import errors
from apiserver.schema.causes import go_quote
from apiserver.storage.interface import StorageError

if TYPE_CHECKING:
    from builtin.garbagecollector.graph import Node

from builtin.wants import WantsStores

log = logging.getLogger(__name__)

COMPONENT = "garbage-collector-controller"
REPORTED_CAPACITY = 10_000


class EventReporter:
    def __init__(self, context: WantsStores) -> None:
        self.context = context
        self._reported: set[tuple[str, str]] = set()

    async def invalid_namespace(self, node: Node, ref: dict[str, Any]) -> None:
        """kube's message: ``ownerRef [<apiVersion>/<kind>, namespace: <ns>, name: <name>, uid: <uid>] does
        not exist in namespace "<ns>"`` (objectReference.String of the reference in the dependent's
        namespace)."""
        key = (node.uid, str(ref.get("uid")))
        if key in self._reported:
            return
        if len(self._reported) >= REPORTED_CAPACITY:
            self._reported.clear()
        self._reported.add(key)
        owner = (
            f"[{ref.get('apiVersion')}/{ref.get('kind')}, namespace: {node.namespace}, "
            f"name: {ref.get('name')}, uid: {ref.get('uid')}]"
        )
        message = f"ownerRef {owner} does not exist in namespace {go_quote(node.namespace)}"
        await self._record(node, "Warning", "OwnerRefInvalidNamespace", message)

    async def _record(self, node: Node, kind: str, reason: str, message: str) -> None:
        """kube's recorder: a cluster-scoped object's events go to the default namespace."""
        store = self.context.stores.get(("", "events"))
        if store is None:
            return
        namespace = node.namespace or "default"
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        involved = {
            "apiVersion": node.api_version,
            "kind": node.kind,
            "name": node.name,
            "namespace": node.namespace,
            "uid": node.uid,
        }
        if not node.namespace:
            del involved["namespace"]
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{node.name}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": kind,
            "source": {"component": COMPONENT},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": COMPONENT,
            "reportingInstance": "",
        }
        try:
            await store.create(namespace, event)
        except (errors.APIError, StorageError) as error:  # a report is best effort, as kube's
            log.warning("could not record event %s on %s: %s", reason, node.name, error)
