"""Answering one ConversionReview with the generated conversion code the server itself uses: each object goes
to the hub (its version's ``to_internal``) and out to the desired version (``from_internal``), so a cluster
converts exactly as `apiforge serve` does.

What is not a ConversionReview is a 400 with a plain-text reason, and a review whose objects cannot be
converted is answered (HTTP 200) with ``result.status: Failure`` and no objects, as kube's own example webhook
does (test/images/agnhost/crd-conversion-webhook/converter/framework.go); kube's webhook converter turns
either into the client's 500 ``conversion webhook for ... failed``
(staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from apiserver.machinery.scheme import ResourceType, Scheme, VersionType

__all__ = ["REVIEW_VERSIONS", "BadReview", "answer", "convert_object"]

REVIEW_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")


class BadReview(Exception):
    """The body is not a ConversionReview with a request: HTTP 400, the message as the body."""


class ConversionFailed(Exception):
    """An object the project cannot convert: the review's ``result.status: Failure`` with this message."""


@dataclass(frozen=True)
class _GroupVersion:
    group: str
    version: str

    @classmethod
    def parse(cls, api_version: object) -> _GroupVersion:
        if not isinstance(api_version, str) or not api_version:
            raise ConversionFailed(f"invalid apiVersion {json.dumps(api_version)}")
        group, _, version = api_version.rpartition("/")
        return cls(group, version)


def _version(resource: ResourceType, name: str) -> VersionType:
    version = resource.version(name)
    if version is None:
        raise ConversionFailed(f"{resource.kind} has no version {resource.api_version(name)}")
    return version


def convert_object(scheme: Scheme, obj: object, desired_api_version: str) -> dict[str, Any]:
    """``obj`` in ``desired_api_version``, through the hub; ConversionFailed when it is not an object of one
    of the project's kinds in that group."""
    if not isinstance(obj, dict):
        raise ConversionFailed("an object to convert is not a JSON object")
    source = _GroupVersion.parse(obj.get("apiVersion"))
    desired = _GroupVersion.parse(desired_api_version)
    kind = obj.get("kind")
    if source.group != desired.group:
        raise ConversionFailed(
            f"cannot convert {obj.get('apiVersion')} to {desired_api_version}: different groups"
        )
    resource = scheme.kind(source.group, kind) if isinstance(kind, str) else None
    if resource is None or resource.builtin:
        raise ConversionFailed(f"no kind {json.dumps(kind)} in group {source.group!r} to convert")
    target = _version(resource, desired.version)
    out: dict[str, Any] = target.from_internal(_version(resource, source.version).to_internal(obj))
    out["apiVersion"] = desired_api_version
    out["kind"] = resource.kind
    return out


def _response(scheme: Scheme, request: dict[str, Any]) -> dict[str, Any]:
    uid = request.get("uid")
    response: dict[str, Any] = {"uid": uid if isinstance(uid, str) else ""}
    try:
        if not isinstance(uid, str) or not uid:
            raise ConversionFailed("the conversion request has no uid")
        desired = request.get("desiredAPIVersion")
        objects = request.get("objects")
        if not isinstance(desired, str) or not desired:
            raise ConversionFailed("the conversion request has no desiredAPIVersion")
        if not isinstance(objects, list):
            raise ConversionFailed("the conversion request's objects are not a list")
        response["convertedObjects"] = [convert_object(scheme, o, desired) for o in objects]
    except ConversionFailed as failure:
        response["result"] = {"status": "Failure", "message": str(failure)}
        return response
    except (
        Exception
    ) as error:  # a conversion hook's own error: the project's code, not the review's
        response["result"] = {"status": "Failure", "message": f"conversion failed: {error}"}
        return response
    response["result"] = {"status": "Success"}
    return response


def answer(scheme: Scheme, content_type: str, body: bytes) -> dict[str, Any]:
    """The ConversionReview answering ``body``; BadReview when it is not a review to answer."""
    media_type = content_type.partition(";")[0].strip().lower()
    if media_type != "application/json":
        raise BadReview(f"invalid Content-Type header `{content_type}`")
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadReview(f"failed to deserialize body with error {error}") from None
    if not isinstance(review, dict):
        raise BadReview("failed to deserialize body: not a JSON object")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    if api_version not in REVIEW_VERSIONS or kind != "ConversionReview":
        raise BadReview(f"Unsupported group version kind: {api_version}, Kind={kind}")
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("conversion request is nil")
    return {"apiVersion": api_version, "kind": kind, "response": _response(scheme, request)}
