"""Conversion strategy ``Webhook``: the objects a client reads or writes in a version other than the storage
version go to the CRD's conversion webhook in a ConversionReview, as kube's apiextensions-apiserver does
(k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go): one review per call (a whole
list page, or a batch of watch events), only the objects not already in the wanted version, the answer checked
(response present, uid, result, object count, apiVersion and kind, name, namespace and uid kept) and only the
labels and annotations of the answer's metadata taken (restoreObjectMeta). Every failure is kube's error text,
``conversion webhook for <gvk> failed: ...``, answered as kube answers a plain error: a 500 with that text
and no reason."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from builtin.wants import WantsStores
from builtin.webhook.client import CallFailed, WebhookClients

__all__ = ["WebhookConverter", "timeout_seconds", "webhook_converter"]

DEFAULT_TIMEOUT_SECONDS = 30.0
"""kube calls a conversion webhook with a fixed 30 s timeout (the CRD versioning docs: "Webhook request and
response ... timeout 30s"); ``APIFORGE_CONVERSION_WEBHOOK_TIMEOUT`` shortens it (tests of a hanging webhook)."""


def timeout_seconds() -> float:
    try:
        return float(os.environ.get("APIFORGE_CONVERSION_WEBHOOK_TIMEOUT", DEFAULT_TIMEOUT_SECONDS))
    except ValueError:
        return DEFAULT_TIMEOUT_SECONDS


class _Invalid(Exception):
    """The webhook answered, but not a usable ConversionReview (kube's message follows the prefix)."""


class WebhookConverter:
    """The async converter of one CRD (``ResourceType.converter``): objects to one apiVersion."""

    def __init__(
        self, clients: WebhookClients, group: str, kind: str, webhook: dict[str, Any]
    ) -> None:
        self.clients = clients
        self.group = group
        self.kind = kind
        self.client_config: dict[str, Any] = dict(webhook.get("clientConfig") or {})
        versions = [str(v) for v in webhook.get("conversionReviewVersions") or ()]
        # kube sends the first version it knows from the CRD's list (v1 before v1beta1 when both)
        self.review_version = next((v for v in versions if v in ("v1", "v1beta1")), "v1")

    def _gvk(self, api_version: str) -> str:
        """Go's schema.GroupVersionKind as %v prints it: ``group/version, Kind=Kind``."""
        return f"{api_version}, Kind={self.kind}"

    async def __call__(self, objects: list[Object], api_version: str) -> list[Object]:
        """``objects`` in ``api_version``; raises kube's 500 when the webhook fails."""
        pending = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != api_version]
        if not pending:
            return objects
        sent = [objects[i] for i in pending]
        # the input's GVK as kube prints it: the (first) object's own apiVersion
        source = self._gvk(str(sent[0].get("apiVersion", "")))
        uid = str(uuid.uuid4())
        review = {
            "apiVersion": f"apiextensions.k8s.io/{self.review_version}",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": sent},
        }
        try:
            answer = await self.clients.post(self.client_config, review, timeout_seconds())
        except CallFailed as error:
            raise errors.unknown_error(f"conversion webhook for {source} failed: {error}") from None
        try:
            converted = self._converted_objects(answer, uid)
        except _Invalid as error:
            raise errors.unknown_error(f"conversion webhook for {source} failed: {error}") from None
        if len(converted) != len(sent):
            raise errors.unknown_error(
                f"conversion webhook for {source} returned {len(converted)} objects, "
                f"expected {len(sent)}"
            )
        out = list(objects)
        for index, (i, original, new) in enumerate(zip(pending, sent, converted, strict=True)):
            try:
                out[i] = self._checked(original, new, api_version)
            except _Invalid as error:
                raise errors.unknown_error(
                    f"conversion webhook for {source} returned invalid converted object at index "
                    f"{index}: {error}"
                ) from None
        return out

    def _converted_objects(self, answer: Any, uid: str) -> list[Any]:
        """getConvertedObjectsFromResponse's checks, in its words."""
        expected = f"apiextensions.k8s.io/{self.review_version}, Kind=ConversionReview"
        got = (
            f"{answer.get('apiVersion', '')}, Kind={answer.get('kind', '')}"
            if isinstance(answer, dict)
            else ""
        )
        if got != expected:
            raise _Invalid(f"expected webhook response of {expected}, got {got or type(answer)}")
        response = answer.get("response")
        if not isinstance(response, dict):
            raise _Invalid("no response provided")
        if response.get("uid") != uid:
            raise _Invalid(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
        result = response.get("result") or {}
        if not isinstance(result, dict) or result.get("status") != "Success":
            message = result.get("message") if isinstance(result, dict) else None
            raise _Invalid(str(message) if message else "conversion request failed")
        objects = response.get("convertedObjects") or []
        if not isinstance(objects, list):
            raise _Invalid("convertedObjects must be a list")
        return objects

    def _checked(self, original: Object, new: Any, api_version: str) -> Object:
        """validateConvertedObject and restoreObjectMeta: the converted object with the original's metadata
        except labels and annotations."""
        if not isinstance(new, dict):
            raise _Invalid("must be an object")
        if new.get("apiVersion") != api_version:
            raise _Invalid(
                f"invalid groupVersion (expected {api_version}, received {new.get('apiVersion', '')})"
            )
        if new.get("kind") != original.get("kind", self.kind):
            raise _Invalid(
                f"invalid kind (expected {original.get('kind', self.kind)}, received "
                f"{new.get('kind', '')})"
            )
        before = original.get("metadata") or {}
        after = new.get("metadata")
        if not isinstance(after, dict):
            after = {}
        for field, word in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
            if (before.get(field) or "") != (after.get(field) or ""):
                raise _Invalid(
                    f"must have the same {word}: {before.get(field, '')} != {after.get(field, '')}"
                )
        metadata = dict(before)
        for field in ("labels", "annotations"):
            value = after.get(field)
            if isinstance(value, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                metadata[field] = value
            elif value is None:
                metadata.pop(field, None)
        return {**new, "metadata": metadata}


class _OwnClients(WebhookConverter):
    """A generated kind's converter: the webhook clients are its own, closed when its server stops."""

    async def close(self) -> None:
        await self.clients.close()


def webhook_converter(
    group: str, kind: str, webhook: dict[str, Any]
) -> Callable[[WantsStores], _OwnClients]:
    """``RESTOptions.converter`` of a kind generated from a CRD with conversion strategy Webhook:
    it converts as the same CRD posted to a running server does."""
    return lambda context: _OwnClients(WebhookClients(context), group, kind, webhook)
