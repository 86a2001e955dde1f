"""How a DELETE propagates to the object's dependents (kube's DeleteOptions.propagationPolicy and the deprecated
orphanDependents): their validation, and the garbage-collection finalizers the generic registry puts on the
owner (k8s.io/apiserver pkg/registry/generic/registry/store.go: deletionFinalizersForGarbageCollection,
shouldOrphanDependents, shouldDeleteDependents). The garbage collector acts on those finalizers."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.schema import causes
from apiserver.schema.options import DELETE, dry_run_causes, refuse

ORPHAN_FINALIZER = "orphan"  # metav1.FinalizerOrphanDependents
FOREGROUND_FINALIZER = "foregroundDeletion"  # metav1.FinalizerDeleteDependents
FOREGROUND, BACKGROUND, ORPHAN = "Foreground", "Background", "Orphan"
POLICIES = (FOREGROUND, BACKGROUND, ORPHAN)


class GarbageCollectionPolicy(Enum):
    """A kind's default for a DELETE that names no policy (kube's rest.GarbageCollectionPolicy)."""

    DELETE_DEPENDENTS = "DeleteDependents"
    ORPHAN_DEPENDENTS = "OrphanDependents"
    UNSUPPORTED = "Unsupported"


@dataclass(frozen=True, slots=True)
class Propagation:
    """What a DELETE asked for: ``policy`` (one of POLICIES) and/or the deprecated ``orphan_dependents``."""

    policy: str | None = None
    orphan_dependents: bool | None = None

    @classmethod
    def from_options(cls, options: Object) -> Propagation:
        """The propagation of a DeleteOptions body (or query), validated as kube's ValidateDeleteOptions:
        a value of the wrong type cannot be decoded (400), a policy kube does not know, both fields set and
        a dryRun other than ``All`` are one 422 on DeleteOptions.meta.k8s.io."""
        policy = options.get("propagationPolicy")
        orphan = options.get("orphanDependents")
        if policy is not None and not isinstance(policy, str):
            raise errors.bad_request("DeleteOptions.propagationPolicy must be a string")
        if orphan is not None and not isinstance(orphan, bool):
            raise errors.bad_request("DeleteOptions.orphanDependents must be a boolean")
        found = []
        if orphan is not None and policy is not None:
            found.append(
                causes.invalid(
                    "propagationPolicy",
                    policy,
                    "orphanDependents and deletionPropagation cannot be both set",
                )
            )
        if policy is not None and policy not in POLICIES:
            found.append(causes.not_supported("propagationPolicy", policy, [*POLICIES, "nil"]))
        found += dry_run_causes(options.get("dryRun") or [])
        refuse(DELETE, found)
        return cls(policy, orphan)

    def orphans(self, finalizers: list[str], default: GarbageCollectionPolicy) -> bool:
        """kube's shouldOrphanDependents: the request, then the object's finalizers, then the kind."""
        if default is GarbageCollectionPolicy.UNSUPPORTED:
            return False
        if self.orphan_dependents is not None:
            return self.orphan_dependents
        if self.policy is not None:
            return self.policy == ORPHAN
        for finalizer in finalizers:
            if finalizer in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
                return finalizer == ORPHAN_FINALIZER
        return default is GarbageCollectionPolicy.ORPHAN_DEPENDENTS

    def foreground(self, finalizers: list[str], default: GarbageCollectionPolicy) -> bool:
        """kube's shouldDeleteDependents: the request, then the object's finalizers."""
        if default is GarbageCollectionPolicy.UNSUPPORTED or self.orphan_dependents is not None:
            return False
        if self.policy is not None:
            return self.policy == FOREGROUND
        for finalizer in finalizers:
            if finalizer in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
                return finalizer == FOREGROUND_FINALIZER
        return False

    def finalizers(self, current: list[str], default: GarbageCollectionPolicy) -> list[str] | None:
        """The object's finalizers once this delete's policy is recorded, or None when they stay as they
        are (kube's deletionFinalizersForGarbageCollection: both GC finalizers removed, then the chosen
        one added back at the end)."""
        kept = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
        if self.orphans(current, default):
            kept.append(ORPHAN_FINALIZER)
        if self.foreground(current, default):
            kept.append(FOREGROUND_FINALIZER)
        return None if set(kept) == set(current) else kept


DEFAULT_PROPAGATION = Propagation()
"""A delete that names no policy: the kind's default, or what the object's finalizers already say."""
