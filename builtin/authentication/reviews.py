"""authentication.k8s.io/v1 SelfSubjectReview and TokenReview: answered from the request's user and the
server's authenticators, never stored (kube's pkg/registry/authentication/{selfsubjectreview,tokenreview})."""

from __future__ import annotations

from apiserver.admission.interface import Attributes
from apiserver.machinery.objects import Object
from apiserver.registry.meta import now_rfc3339
from apiserver.registry.strategy import Strategy


class SelfSubjectReviewStrategy(Strategy):
    """`kubectl auth whoami`: the user this very request was authenticated (or impersonated) as."""

    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        obj.setdefault("metadata", {}).setdefault("creationTimestamp", now_rfc3339())
        obj["status"] = {"userInfo": attributes.user.as_json()}
        return obj


class TokenReviewStrategy(Strategy):
    """Who ``spec.token`` belongs to, by the server's token authenticator. With none configured no token is
    anyone's, so the review answers ``authenticated: false``, as kube's does for a token it cannot verify."""

    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        obj.setdefault("metadata", {}).setdefault("creationTimestamp", now_rfc3339())
        spec = obj.get("spec") or {}
        audiences = list(spec.get("audiences") or [])
        authenticate = self.context.token_authenticator
        user = await authenticate(str(spec.get("token") or "")) if authenticate else None
        if user is None:
            obj["status"] = {"authenticated": False, "audiences": audiences}
        else:
            obj["status"] = {"authenticated": True, "user": user.as_json(), "audiences": audiences}
        return obj
