"""The shared k8s.io/apimachinery meta/v1 messages, declared once: ObjectMeta and what it holds, ListMeta, Status,
Condition, DeleteOptions, PartialObjectMetadata, and each kind's codec (its message and its list's).

Field numbers and JSON rules come from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto and types.go. Every
generated kind message holds ``METADATA`` as field 1 (as every kube kind does), and definitions name
``Condition`` (metav1.Condition) through their ``[]Condition`` type expression.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apiserver.encoding.protobuf import Field, MapOf, Message

OWNER_REFERENCE = Message(
    "OwnerReference",
    (
        Field(5, "apiVersion", omitempty=False),
        Field(1, "kind", omitempty=False),
        Field(3, "name", omitempty=False),
        Field(4, "uid", omitempty=False),
        Field(6, "controller", "bool", pointer=True),
        Field(7, "blockOwnerDeletion", "bool", pointer=True),
    ),
)
MANAGED_FIELDS_ENTRY = Message(
    "ManagedFieldsEntry",
    (
        Field(1, "manager"),
        Field(2, "operation"),
        Field(3, "apiVersion"),
        Field(4, "time", "time", pointer=True),
        Field(6, "fieldsType"),
        Field(7, "fieldsV1", "fieldsv1", pointer=True),
        Field(8, "subresource"),
    ),
)
OBJECT_META = Message(
    "ObjectMeta",
    (
        Field(1, "name"),
        Field(2, "generateName"),
        Field(3, "namespace"),
        Field(4, "selfLink"),
        Field(5, "uid"),
        Field(6, "resourceVersion"),
        Field(7, "generation", "int64"),
        Field(8, "creationTimestamp", "time"),
        Field(9, "deletionTimestamp", "time", pointer=True),
        Field(10, "deletionGracePeriodSeconds", "int64", pointer=True),
        Field(11, "labels", MapOf("string")),
        Field(12, "annotations", MapOf("string")),
        Field(13, "ownerReferences", OWNER_REFERENCE, repeated=True),
        Field(14, "finalizers", repeated=True),
        Field(17, "managedFields", MANAGED_FIELDS_ENTRY, repeated=True),
    ),
)
METADATA = Field(1, "metadata", OBJECT_META)
"""Field 1 of every kind's message."""

LIST_META = Message(
    "ListMeta",
    (
        Field(1, "selfLink"),
        Field(2, "resourceVersion"),
        Field(3, "continue"),
        Field(4, "remainingItemCount", "int64", pointer=True),
    ),
)
CONDITION = Message(
    "Condition",
    (
        Field(1, "type", omitempty=False),
        Field(2, "status", omitempty=False),
        Field(3, "observedGeneration", "int64"),
        Field(4, "lastTransitionTime", "time"),
        Field(5, "reason", omitempty=False),
        Field(6, "message", omitempty=False),
    ),
)
STATUS_CAUSE = Message("StatusCause", (Field(1, "reason"), Field(2, "message"), Field(3, "field")))
STATUS_DETAILS = Message(
    "StatusDetails",
    (
        Field(1, "name"),
        Field(2, "group"),
        Field(3, "kind"),
        Field(6, "uid"),
        Field(4, "causes", STATUS_CAUSE, repeated=True),
        Field(5, "retryAfterSeconds", "int32"),
    ),
)
STATUS = Message(
    "Status",
    (
        Field(1, "metadata", LIST_META),
        Field(2, "status"),
        Field(3, "message"),
        Field(4, "reason"),
        Field(5, "details", STATUS_DETAILS, pointer=True),
        Field(6, "code", "int32"),
    ),
)
PRECONDITIONS = Message(
    "Preconditions",
    (Field(1, "uid", pointer=True), Field(2, "resourceVersion", pointer=True)),
)
DELETE_OPTIONS = Message(
    "DeleteOptions",
    (
        Field(1, "gracePeriodSeconds", "int64", pointer=True),
        Field(2, "preconditions", PRECONDITIONS, pointer=True),
        Field(3, "orphanDependents", "bool", pointer=True),
        Field(4, "propagationPolicy", pointer=True),
        Field(5, "dryRun", repeated=True),
        Field(6, "ignoreStoreReadErrorWithClusterBreakingPotential", "bool", pointer=True),
    ),
)
"""The body of a DELETE, which client-go's typed clients send as protobuf."""
PARTIAL_OBJECT_METADATA = Message("PartialObjectMetadata", (METADATA,))
PARTIAL_OBJECT_METADATA_LIST = Message(
    "PartialObjectMetadataList",
    (Field(1, "metadata", LIST_META), Field(2, "items", PARTIAL_OBJECT_METADATA, repeated=True)),
)
SHARED: dict[str, Message] = {"Condition": CONDITION}
"""The shared messages a definition's schema may stand for, by the name its type expression uses."""


@dataclass(frozen=True)
class KindCodec:
    """A kind's protobuf messages, registered on its VersionType: the object's, and its list's (as every kube
    ``<Kind>List``: ListMeta metadata = 1, repeated items = 2)."""

    message: Message
    list: Message = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        items = Field(2, "items", self.message, repeated=True)
        object.__setattr__(
            self,
            "list",
            Message(f"{self.message.name}List", (Field(1, "metadata", LIST_META), items)),
        )
