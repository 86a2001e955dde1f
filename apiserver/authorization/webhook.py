"""Delegated authorization (k8s.io/apiserver pkg/authorization/authorizerfactory's delegating config and
plugin/pkg/authorizer/webhook): a request is judged by another API server in a SubjectAccessReview posted with
``--authorization-kubeconfig``'s credentials. Allowed verdicts are kept for
``--authorization-webhook-cache-authorized-ttl``, the others for ``--authorization-webhook-cache-unauthorized-ttl``
(kube's 10s both); a review that cannot be made is NoOpinion (so the request is refused unless another mode
allows it) and is not kept. The paths of ``--authorization-always-allow-paths`` (kube's /healthz, /readyz,
/livez) are allowed without asking, so that a kubelet's probes cost the front nothing."""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from apiserver.authentication.user import UserInfo
from apiserver.authorization.authorizer import Attributes, Decision, Rules
from apiserver.client.ttlcache import TTLCache

log = logging.getLogger(__name__)
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
DEFAULT_ALLOW_TTL = 10.0
DEFAULT_DENY_TTL = 10.0
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")


class SubjectAccessReviewAuthorizer:
    """An Authorizer asking a remote SubjectAccessReview API."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        allow_ttl: float = DEFAULT_ALLOW_TTL,
        deny_ttl: float = DEFAULT_DENY_TTL,
        always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
    ) -> None:
        self.client = client
        self.allow_ttl = allow_ttl
        self.deny_ttl = deny_ttl
        self.always_allow_paths = tuple(always_allow_paths)
        self.cache: TTLCache[tuple[Decision, str]] = TTLCache()

    async def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        if not attributes.resource_request and self._always_allowed(attributes.path):
            return Decision.ALLOW, ""
        spec = review_spec(attributes)
        key = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS).decode()
        verdict = self.cache.get(key)
        if verdict is not None:
            return verdict
        try:
            answer = await self.client.post(
                SUBJECT_ACCESS_REVIEWS,
                content=orjson.dumps(
                    {
                        "apiVersion": "authorization.k8s.io/v1",
                        "kind": "SubjectAccessReview",
                        "spec": spec,
                    }
                ),
            )
            answer.raise_for_status()
            status = orjson.loads(answer.content).get("status") or {}
        except (httpx.HTTPError, orjson.JSONDecodeError, AttributeError) as error:
            log.warning("subject access review failed: %s", error)
            return Decision.NO_OPINION, f"authorization webhook failed: {error}"
        reason = str(status.get("reason") or "")
        if status.get("allowed"):
            verdict = (Decision.ALLOW, reason)
        else:
            verdict = (Decision.DENY if status.get("denied") else Decision.NO_OPINION, reason)
        self.cache.set(key, verdict, self.allow_ttl if status.get("allowed") else self.deny_ttl)
        return verdict

    def _always_allowed(self, path: str) -> bool:
        """kube's path authorizer: an exact path, or a prefix ending in ``*``."""
        return any(
            path == allowed or (allowed.endswith("*") and fnmatch.fnmatchcase(path, allowed))
            for allowed in self.always_allow_paths
        )

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """kube's webhook authorizer cannot list rules."""
        return Rules(
            incomplete=True,
            evaluation_error="webhook authorizer does not support user rule resolution",
        )


def review_spec(attributes: Attributes) -> dict[str, Any]:
    """The SubjectAccessReview spec of a request, as kube's webhook authorizer fills it."""
    user = attributes.user
    spec: dict[str, Any] = {"user": user.name}
    if user.uid:
        spec["uid"] = user.uid
    if user.groups:
        spec["groups"] = list(user.groups)
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra.items()}
    if attributes.resource_request:
        resource = {
            "namespace": attributes.namespace,
            "verb": attributes.verb,
            "group": attributes.api_group,
            "version": attributes.api_version,
            "resource": attributes.resource,
            "subresource": attributes.subresource,
            "name": attributes.name,
        }
        spec["resourceAttributes"] = {key: value for key, value in resource.items() if value}
    else:
        spec["nonResourceAttributes"] = {"path": attributes.path, "verb": attributes.verb}
    return spec
