"""The strategies of the two Event views of one storage (kube's pkg/registry/core/event, which both groups
share): core v1 writes pass kube's legacy rules only, events.k8s.io/v1 writes its strict ones
(builtin.events.validation). Both select on kube's field labels: ``source`` is the reporting component of
either API, and events.k8s.io names the involved object ``regarding`` (pkg/apis/events/v1/conversion.go
AddFieldLabelConversionsForEvent, pkg/registry/core/event/strategy.go ToSelectableFields)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from apiserver.machinery.objects import Object
from apiserver.registry.strategy import Strategy
from apiserver.schema import Cause
from builtin.events.validation import validate_create, validate_legacy, validate_update

# ToSelectableFields' ``source``: the old API's source.component, else the new API's reporting controller
_SOURCE = ("source.component", "reportingComponent")
_REFERENCE_FIELDS = (
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
)


class CoreEventStrategy(Strategy):
    """core v1 Event: legacyValidateEvent on create and update, nothing stricter (kube's compatibility)."""

    field_labels: ClassVar[Mapping[str, tuple[str, ...]]] = {"source": _SOURCE}

    def validate(self, obj: Object) -> list[Cause]:
        return validate_legacy(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return validate_legacy(obj)


class EventStrategy(Strategy):
    """events.k8s.io/v1 Event: ValidateEventCreate and ValidateEventUpdate in full."""

    field_labels: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "source": _SOURCE,
        "reportingController": ("reportingComponent",),
        **{f"regarding.{field}": (f"involvedObject.{field}",) for field in _REFERENCE_FIELDS},
    }

    def validate(self, obj: Object) -> list[Cause]:
        return validate_create(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return validate_update(obj, old)
