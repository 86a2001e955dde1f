"""coordination.k8s.io/v1 Lease (kube's pkg/apis/coordination/validation): the rules on a lease's spec that
its schema cannot say in kube's words."""

from __future__ import annotations

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import causes
from apiserver.schema.causes import Cause


class LeaseStrategy(Strategy):
    def validate(self, obj: Object) -> list[Cause]:
        return validate_lease_spec(obj.get("spec") or {})

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return validate_lease_spec(obj.get("spec") or {})


def validate_lease_spec(spec: Object) -> list[Cause]:
    """kube's ValidateLeaseSpec."""
    found = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        found.append(
            causes.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")
        )
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        found.append(
            causes.invalid(
                "spec.leaseTransitions", transitions, "must be greater than or equal to 0"
            )
        )
    if spec.get("preferredHolder") and not spec.get("strategy"):
        found.append(
            causes.forbidden(
                "spec.preferredHolder", "may only be specified if `strategy` is defined"
            )
        )
    return found
