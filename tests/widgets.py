"""A minimal cluster-scoped kind for registry tests that need a Store but no generated definitions."""

from __future__ import annotations

from apiserver.machinery.scheme import ResourceType, VersionType

WIDGETS = ResourceType(
    group="example.com",
    kind="Widget",
    plural="widgets",
    singular="widget",
    list_kind="WidgetList",
    namespaced=False,
    versions=(
        VersionType(
            name="v1",
            served=True,
            storage=True,
            # the Store prunes what a schema does not declare: this one keeps everything
            schema={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        ),
    ),
)
