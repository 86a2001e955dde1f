"""kube's ``admission.Interface``: the attributes of a write and the two kinds of plugins that judge it.

A plugin says which writes it ``handles`` (cheap: it is asked on every write), then ``admit`` may change the
new object in place (mutating plugins, run first, in order) and ``validate`` may only refuse it (validating
plugins, run after the object is final). Refusing is raising ``APIError`` (kube's admission errors are
Forbidden or Invalid Status objects); ``warnings`` collects what the client gets as Warning headers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from apiserver.authentication.user import UserInfo
from apiserver.machinery.objects import Object

if TYPE_CHECKING:
    from apiserver.machinery.scheme import ResourceType, VersionType


class Operation(enum.Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


@dataclass(slots=True)
class Attributes:
    """One write as admission sees it (kube's ``admission.Attributes``). ``obj`` is the new object (None for
    a delete) and ``old`` the stored one (None for a create), both in ``version``."""

    operation: Operation
    resource: ResourceType
    version: VersionType
    namespace: str
    name: str
    obj: Object | None
    old: Object | None
    user: UserInfo
    subresource: str = ""
    dry_run: bool = False
    warnings: list[str] = field(default_factory=list)
    request_version: VersionType | None = None
    """The version the client wrote in, when ``version`` is another (the validating plugins see the object
    in the storage version): a webhook is sent the object in the version it was written in."""


@runtime_checkable
class MutationInterface(Protocol):
    def handles(self, operation: Operation) -> bool: ...

    async def admit(self, attributes: Attributes) -> None:
        """Change ``attributes.obj`` in place, or raise APIError to refuse the write."""
        ...


@runtime_checkable
class ValidationInterface(Protocol):
    def handles(self, operation: Operation) -> bool: ...

    async def validate(self, attributes: Attributes) -> None:
        """Raise APIError to refuse the write; never change it."""
        ...


@runtime_checkable
class Scoped(Protocol):
    """What a plugin may also say: whether it could ever act on ``operation`` of ``resource``, whatever is
    configured while serving. A chain leaves it out of every other write without asking ``handles``."""

    def acts_on(self, resource: ResourceType, operation: Operation) -> bool: ...


Plugin = MutationInterface | ValidationInterface
