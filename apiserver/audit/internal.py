"""Writes the server makes on its own behalf, recorded in the audit log as requests of the controller that
makes them. kube's controllers run in kube-controller-manager and write through the API, so kube's audit log
shows, say, the garbage collector's deletes as requests of
``system:serviceaccount:kube-system:generic-garbage-collector``; apiforge's controllers write to their
Stores directly, and this records each such write as the request kube's controller would have made: the
same user, verb, requestURI and objectRef, judged by the same policy, with a RequestReceived and a
ResponseComplete stage and the answer's status. Reads are not recorded: only writes change what others see,
and an operator (or a test) counts them to tell who wrote what."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from apiserver.audit.event import Backend, Event, Level, Stage, emit, status_fields
from apiserver.audit.policy import Policy
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes
from apiserver.machinery import errors

T = TypeVar("T")

USER_AGENT = "apiforge/controller"


@dataclass(frozen=True, slots=True)
class Target:
    """The object a write is addressed to, as the request's path names it."""

    group: str
    version: str
    plural: str
    namespace: str
    name: str

    @property
    def path(self) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        where = f"/namespaces/{self.namespace}" if self.namespace else ""
        return f"{root}{where}/{self.plural}/{self.name}"

    def object_ref(self) -> dict[str, str]:
        fields = {
            "resource": self.plural,
            "namespace": self.namespace,
            "name": self.name,
            "apiGroup": self.group,
            "apiVersion": self.version,
        }
        return {key: value for key, value in fields.items() if value}


class InternalAudit:
    """The audit policy and backend of the server's log, for its own writes; with no backend (no
    `--audit-log-path`), writes run unrecorded."""

    def __init__(self, policy: Policy | None = None, backend: Backend | None = None) -> None:
        self.policy = policy
        self.backend = backend

    async def write(
        self,
        user: UserInfo,
        verb: str,
        target: Target,
        write: Awaitable[T],
        request_object: dict[str, Any] | None = None,
    ) -> T:
        """Run ``write`` as ``user``'s ``verb`` request on ``target``: its status is 200 when it returns and
        the error's code when it raises an API error (500 for any other error; the error goes on to the
        caller); ``request_object`` (the DeleteOptions kube's controller would send) is kept at the Request
        level and above."""
        if self.policy is None or self.backend is None:
            return await write
        attributes = Attributes(
            user,
            verb,
            True,
            target.namespace,
            target.group,
            target.version,
            target.plural,
            name=target.name,
            path=target.path,
        )
        config = self.policy.evaluate(attributes)
        if config.level is Level.NONE:
            return await write
        event = Event(
            config.level,
            str(uuid.uuid4()),
            target.path,
            verb,
            user,
            (),
            USER_AGENT,
            time.time(),
            target.object_ref(),
        )
        if config.level.records_request:
            event.request_object = request_object
        emit(self.backend, event, Stage.REQUEST_RECEIVED, config.omit_stages)
        try:
            result = await write
        except errors.APIError as error:
            event.response_status = status_fields(error.status())
            emit(self.backend, event, Stage.RESPONSE_COMPLETE, config.omit_stages)
            raise
        except Exception as error:  # storage failing: what kube's handler would answer, a 500
            event.response_status = status_fields(errors.internal_error(str(error)).status())
            emit(self.backend, event, Stage.RESPONSE_COMPLETE, config.omit_stages)
            raise
        event.response_status = {"metadata": {}, "code": 200}
        emit(self.backend, event, Stage.RESPONSE_COMPLETE, config.omit_stages)
        return result
