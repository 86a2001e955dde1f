"""Per-kind behaviour the generic Store calls at fixed points, for the few built-in kinds whose rules a schema
cannot express (kube's RESTCreateStrategy/RESTUpdateStrategy `PrepareForCreate`/`PrepareForUpdate`).

Both hooks run on the internal object after the generic preparation and before storage; they may change the
object in place and nothing else.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from apiserver.machinery.objects import Object


@dataclass(frozen=True)
class Strategy:
    """No-op by default: generated and custom kinds need nothing beyond their schema."""

    def prepare_for_create(self, obj: Object) -> None:
        """Runs once when an object is created."""

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Runs on every update, with the stored object as ``old``."""

    def finalized_later(self, obj: Object) -> bool:
        """Whether deletion must wait for something besides ``metadata.finalizers``."""
        return False

    def prepare_for_deletion(self, obj: Object) -> None:
        """Runs when a delete only marks the object (deletionTimestamp set) instead of removing it."""


DEFAULT = Strategy()


class NamespaceStrategy(Strategy):
    """A new namespace is Active and carries the `kubernetes` finalizer in its spec; deleting it makes it
    Terminating until the namespace controller has emptied it and cleared that finalizer (kube's namespace
    strategy and lifecycle)."""

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = spec.setdefault("finalizers", [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")

    def finalized_later(self, obj: Object) -> bool:
        return bool((obj.get("spec") or {}).get("finalizers"))

    def prepare_for_deletion(self, obj: Object) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"


class SecretStrategy(Strategy):
    """`stringData` is write-only: merged into `data` (base64) and dropped, as kube's secret strategy does."""

    def prepare_for_create(self, obj: Object) -> None:
        _merge_string_data(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        _merge_string_data(obj)


def _merge_string_data(obj: Object) -> None:
    string_data = obj.pop("stringData", None)
    if string_data:
        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


BUILTIN_STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "Namespace"): NamespaceStrategy(),
    ("", "Secret"): SecretStrategy(),
}


def strategy_for(group: str, kind: str) -> Strategy:
    return BUILTIN_STRATEGIES.get((group, kind), DEFAULT)
