"""The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins (kube's
k8s.io/apiserver/pkg/admission/plugin/webhook): every webhook of every configuration whose rules, selectors
and match conditions select a write is sent an AdmissionReview; mutating ones run one after the other (in
configuration name order) and may answer a JSONPatch, validating ones run concurrently on the final object.
A webhook that cannot be called, times out or answers garbage refuses the write with failurePolicy Fail and
is skipped with Ignore; a denial is ``admission webhook "<name>" denied the request: <message>``. The calls
are awaited I/O: the event loop serves other requests meanwhile.

Each plugin follows its configurations with an informer (it is the kind's controller too: the definition
names the same factory twice and the server's ``part`` makes one object)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from typing import Any, ClassVar

import orjson

from apiserver.admission.interface import Attributes, Operation
from apiserver.audit.annotations import add_annotations
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.patch.jsonpatch import PatchError, apply_json_patch
from builtin.admissionregistration.conditions import ConditionError, conditions_match
from builtin.admissionregistration.equivalents import Matched
from builtin.admissionregistration.matching import WEBHOOK, Matcher
from builtin.admissionregistration.review import (
    InvalidResponse,
    Verdict,
    admission_review,
    verify_response,
)
from builtin.rbac.informer import Informer
from builtin.wants import WantsParts, WantsStores
from builtin.webhook.client import CallFailed, ClientConfigError, WebhookClients

log = logging.getLogger(__name__)
GROUP = "admissionregistration.k8s.io"


class Webhooks:
    """The webhooks of one kind of configuration, in kube's order (configurations by name, then as
    listed), and the calls to them."""

    plural: ClassVar[str]
    mutating: ClassVar[bool]

    def __init__(self, context: WantsStores) -> None:
        self.context = context
        self.configurations: dict[str, Object] = {}
        self.hooks: list[dict[str, Any]] = []
        self.clients = WebhookClients(context)
        self.informer: Informer | None = None
        self.matcher = Matcher(context, WEBHOOK)

    # -- following the configurations (informer handler and controller) ------------------------------------

    def replace(self, objects: list[dict[str, Any]]) -> None:
        self.configurations = {o["metadata"]["name"]: o for o in objects}
        self._index()

    def changed(self, event_type: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if event_type == "DELETED":
            self.configurations.pop(name, None)
        else:
            self.configurations[name] = obj
        self._index()

    def _index(self) -> None:
        self.matcher.forget()
        self.hooks = [
            hook
            for name in sorted(self.configurations)
            for hook in self.configurations[name].get("webhooks") or ()
            if isinstance(hook, dict)
        ]

    async def start(self) -> None:
        self.informer = Informer(self.context.store(GROUP, self.plural), self)
        await self.informer.start()

    async def stop(self) -> None:
        if self.informer is not None:
            await self.informer.stop()
        await self.clients.close()

    def handles(self, operation: Operation) -> bool:
        return bool(self.hooks) and operation is not Operation.CONNECT

    # -- one webhook --------------------------------------------------------------------------------------

    async def send(self, hook: dict[str, Any], review: dict[str, Any], timeout: int) -> Any:
        """The hook's answer to ``review`` (an AdmissionReview); raises CallFailed, worded as kube's
        webhook dispatcher words a failed call (``failed to call webhook: Post "<url>": ...``)."""
        try:
            return await self.clients.post(hook.get("clientConfig"), review, timeout)
        except ClientConfigError:
            raise
        except CallFailed as error:
            raise CallFailed(f"failed to call webhook: {error}") from None

    async def call(
        self, hook: dict[str, Any], attributes: Attributes, obj: Object | None, old: Object | None,
        matched: Matched,
    ) -> Verdict | None:  # fmt: skip
        """Send the review; the verified verdict, or None when the webhook is skipped (a false match
        condition, or a failure under failurePolicy Ignore). Raises the APIError kube answers."""
        name = str(hook.get("name", ""))
        review = admission_review(attributes, matched, obj, old)
        request = review["request"]
        ignore = hook.get("failurePolicy", "Fail") == "Ignore"
        try:
            if not conditions_match(hook, obj, old, request):
                return None
        except ConditionError as error:
            if ignore:
                return None
            raise errors.forbidden(
                attributes.resource.plural, attributes.resource.group, attributes.name, str(error)
            ) from None
        timeout = hook.get("timeoutSeconds", 10)
        try:
            answer = await self.send(hook, review, int(timeout))
            verdict = verify_response(answer, request["uid"], self.mutating)
        except (CallFailed, InvalidResponse) as error:
            reason = (
                f"received invalid webhook response: {error}"
                if isinstance(error, InvalidResponse)
                else str(error)
            )
            message = f'failed calling webhook "{name}": {reason}'
            if ignore:
                log.warning("%s; failurePolicy Ignore", message)
                return None
            raise errors.internal_error(message) from None
        attributes.warnings.extend(w for w in verdict.warnings if w not in attributes.warnings)
        add_annotations({f"{name}/{k}": v for k, v in verdict.audit_annotations.items()})
        if not verdict.allowed:
            raise denied(name, verdict.status)
        return verdict


def denied(name: str, status: dict[str, Any]) -> errors.APIError:
    """kube's webhookerrors.ToStatusErr: the webhook's Status, at least 400, its message prefixed."""
    prefix = f'admission webhook "{name}" denied the request'
    message, reason = status.get("message"), status.get("reason")
    if isinstance(message, str) and message:
        text = f"{prefix}: {message}"
    elif isinstance(reason, str) and reason:
        text = f"{prefix}: {reason}"
    else:
        text = f"{prefix} without explanation"
    code = status.get("code")
    code = code if isinstance(code, int) and 400 <= code <= 599 else 400
    return errors.APIError(code, str(reason or ""), text)


class ValidatingWebhooks(Webhooks):
    """Runs after the object is final (in the hub version): every selected webhook, concurrently; the first
    refusal in webhook order is the answer."""

    plural = "validatingwebhookconfigurations"
    mutating = False

    async def validate(self, attributes: Attributes) -> None:
        resource = attributes.resource
        calls = []
        for hook in list(self.hooks):
            matched = await self.matcher.matches(hook, attributes)
            if matched is not None:
                obj = matched.view(attributes.obj, resource, None)
                old = matched.view(attributes.old, resource, None)
                calls.append(self.call(hook, attributes, obj, old, matched))
        results = await asyncio.gather(*calls, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result


class MutatingWebhooks(Webhooks):
    """Runs before validation, on the object in the version it was written in: each selected webhook in
    turn, its JSONPatch applied to the object in the webhook's version (the schema validates the result
    afterwards, as kube's does); webhooks with reinvocationPolicy IfNeeded run once more when a later one
    changed the object."""

    plural = "mutatingwebhookconfigurations"
    mutating = True

    async def admit(self, attributes: Attributes) -> None:
        ran: list[tuple[dict[str, Any], Any]] = []
        for hook in list(self.hooks):
            if await self._admit_one(hook, attributes):
                ran.append((hook, _snapshot(attributes.obj)))
        changed_since = [
            hook
            for hook, seen in ran
            if hook.get("reinvocationPolicy") == "IfNeeded" and seen != _snapshot(attributes.obj)
        ]
        for hook in changed_since:
            await self._admit_one(hook, attributes)

    async def _admit_one(self, hook: dict[str, Any], attributes: Attributes) -> bool:
        """Call ``hook`` if it selects the write and apply its patch; whether it was called."""
        resource, written = attributes.resource, attributes.version
        matched = await self.matcher.matches(hook, attributes)
        if matched is None:
            return False
        obj = matched.view(attributes.obj, resource, written)
        old = matched.view(attributes.old, resource, written)
        verdict = await self.call(hook, attributes, obj, old, matched)
        if verdict is None:
            return False
        if verdict.patch is not None:
            self._apply(str(hook.get("name", "")), verdict.patch, attributes, obj, matched)
        return True

    @staticmethod
    def _apply(
        name: str, patch: Any, attributes: Attributes, obj: Object | None, matched: Matched
    ) -> None:
        """The webhook's base64 JSONPatch on ``obj`` (its version), the result put back into the written
        object in place; kube answers an undecodable or inapplicable patch with an internal error."""
        try:
            operations = orjson.loads(base64.b64decode(str(patch), validate=True))
        except (binascii.Error, orjson.JSONDecodeError, ValueError) as error:
            raise errors.internal_error(
                f'admission webhook "{name}" returned an invalid patch: {error}'
            ) from None
        if not isinstance(operations, list):
            raise errors.internal_error(
                f'admission webhook "{name}" returned an invalid patch: json: cannot unmarshal '
                "object into Go value of type jsonpatch.Patch"
            )
        if not operations:
            return
        if obj is None or attributes.obj is None:
            raise errors.internal_error(
                f'admission webhook "{name}" attempted to modify the object, which is not supported '
                "for this operation"
            )
        try:
            patched = apply_json_patch(obj, operations)
        except PatchError as error:
            raise errors.internal_error(str(error)) from None
        if not isinstance(patched, dict):
            raise errors.internal_error(
                f'admission webhook "{name}" patched the object into a non-object'
            )
        result = matched.back(patched, attributes.resource, attributes.version)
        attributes.obj.clear()
        attributes.obj.update(result)


def _snapshot(obj: Object | None) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def validating_webhooks(context: WantsParts) -> ValidatingWebhooks:
    """The server's one ValidatingAdmissionWebhook plugin (its admission plugin and its controller)."""
    return context.part(ValidatingWebhooks)


def mutating_webhooks(context: WantsParts) -> MutatingWebhooks:
    """The server's one MutatingAdmissionWebhook plugin (its admission plugin and its controller)."""
    return context.part(MutatingWebhooks)
