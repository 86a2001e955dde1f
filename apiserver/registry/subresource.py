"""The seam of subresources that take a POST of another kind and answer with it (kube's rest.NamedCreater,
as ``serviceaccounts/token`` takes a TokenRequest): the endpoint decodes and validates the body as its own
kind, and the handler a definition names answers it for the parent object the URL names."""

from __future__ import annotations

from typing import Protocol

from apiserver.admission.interface import Attributes
from apiserver.machinery.objects import Object


class NamedCreater(Protocol):
    async def create(self, attributes: Attributes) -> Object:
        """The answer to a POST to the subresource: ``attributes`` name the parent (namespace, name, the
        subresource), the user, dry run, and carry the validated body (``obj``, in its hub version). An
        ``errors.APIError`` (a missing parent: 404) is answered as is."""
        ...
