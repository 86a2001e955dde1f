"""The Kubernetes CEL authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go) for admission
expressions: ``authorizer.group('apps').resource('deployments').namespace('x').name('y').check('get')
.allowed()``, ``authorizer.path('/healthz').check('get')``, ``authorizer.serviceAccount(ns, name)`` and
``authorizer.requestResource`` (the request's own resource), each check asking the server's authorizer
about the request's user.

Checks are values (maps tagged with what they are) and the functions build on them. The server's
authorizers answer from memory without suspending (RBAC's indexes), so a check drives the coroutine to its
end in place; one that would wait on I/O is an error of the expression, never a stall of the loop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Coroutine
from typing import Any

from apiserver.admission.interface import Attributes as AdmissionAttributes
from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes, Authorizer, Decision

_ASKING = threading.local()
"""The authorizer and user of the evaluation running on this thread (set by ``asking``)."""


class Asking:
    """``with Asking(authorizer, user):`` around an evaluation whose checks ask them."""

    def __init__(self, authorizer: Authorizer, user: UserInfo) -> None:
        self.asked = (authorizer, user)

    def __enter__(self) -> None:
        _ASKING.current = self.asked

    def __exit__(self, *exc: object) -> None:
        _ASKING.current = None


def authorizer_value(attributes: AdmissionAttributes) -> dict[str, Any]:
    """The ``authorizer`` variable: its ``requestResource`` is the check of the request's resource."""
    resource = attributes.resource
    version = attributes.request_version or attributes.version
    return {
        "kind": "authorizer",
        "requestResource": {
            "kind": "resource",
            "group": resource.group,
            "version": version.name,
            "resource": resource.plural,
            "subresource": attributes.subresource,
            "namespace": attributes.namespace,
            "name": attributes.name,
        },
    }


def _completed(coroutine: Coroutine[Any, Any, tuple[Decision, str]]) -> tuple[Decision, str]:
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: tuple[Decision, str] = done.value
        return result
    coroutine.close()
    raise RuntimeError("the authorizer cannot answer without waiting")


def _check(receiver: dict[str, Any], verb: str) -> dict[str, Any]:
    asked = getattr(_ASKING, "current", None)
    if asked is None:
        raise RuntimeError("no authorizer for this expression")
    authorizer, user = asked
    account = receiver.get("serviceAccount")
    if isinstance(account, list) and len(account) == 2:  # kube's serviceaccount.UserInfo
        namespace, name = account
        user = UserInfo(
            f"system:serviceaccount:{namespace}:{name}",
            groups=("system:serviceaccounts", f"system:serviceaccounts:{namespace}"),
        )
    if receiver.get("kind") == "path":
        attributes = Attributes(user, verb, False, path=str(receiver.get("path", "")))
    else:
        attributes = Attributes(
            user,
            verb,
            True,
            namespace=str(receiver.get("namespace", "")),
            api_group=str(receiver.get("group", "")),
            api_version=str(receiver.get("version", "*")),
            resource=str(receiver.get("resource", "")),
            subresource=str(receiver.get("subresource", "")),
            name=str(receiver.get("name", "")),
        )
    try:
        decision, reason = _completed(authorizer.authorize(attributes))
    except Exception as error:  # the decision says it errored, as kube's
        return {"kind": "decision", "decision": "error", "reason": "", "error": str(error)}
    return {"kind": "decision", "decision": decision.value, "reason": reason, "error": ""}


def _setter(key: str, kind: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    return lambda receiver, value: {**receiver, "kind": kind, key: value}


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "path": _setter("path", "path"),
    "group": _setter("group", "group"),
    "serviceAccount": lambda receiver, namespace, name: {
        "kind": "authorizer", "serviceAccount": [namespace, name]
    },
    "resource": _setter("resource", "resource"),
    "subresource": _setter("subresource", "resource"),
    "namespace": _setter("namespace", "resource"),
    "name": _setter("name", "resource"),
    "check": _check,
    "allowed": lambda decision: decision.get("decision") == Decision.ALLOW.value,
    "reason": lambda decision: decision.get("reason", ""),
    "errored": lambda decision: decision.get("decision") == "error",
    "error": lambda decision: decision.get("error", ""),
}  # fmt: skip
