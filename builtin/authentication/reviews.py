"""authentication.k8s.io/v1 SelfSubjectReview and TokenReview: answered from the request's user and the
server's authenticators, never stored (kube's pkg/registry/authentication/{selfsubjectreview,tokenreview})."""

from __future__ import annotations

from apiserver.admission.interface import Attributes
from apiserver.authentication.authenticator import AuthenticationError, with_authenticated_group
from apiserver.machinery import errors
from apiserver.machinery.objects import Object
from apiserver.registry.meta import now_rfc3339
from apiserver.registry.strategy import Strategy
from builtin.wants import WantsTokens


class SelfSubjectReviewStrategy(Strategy):
    """`kubectl auth whoami`: the user this very request was authenticated (or impersonated) as."""

    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        """A new review (kube's selfsubjectreview REST): a creationTimestamp and the user, nothing asked."""
        return {
            "kind": obj.get("kind"),
            "apiVersion": obj.get("apiVersion"),
            "metadata": {"creationTimestamp": now_rfc3339()},
            "status": {"userInfo": attributes.user.as_json()},
        }


class TokenReviewStrategy(Strategy):
    """Who ``spec.token`` belongs to, by the server's token authenticators (kube's TokenReview REST): for
    the audiences the review names, else the API server's own. A token nobody accepts has the reason in
    ``status.error`` and an empty user (kube's TokenReviewStatus: ``authenticated`` is omitempty, ``user``
    a struct, always encoded); an accepted one names the user (in ``system:authenticated``, as the request
    authenticator puts it) and the audiences it holds."""

    def __init__(self, server: WantsTokens) -> None:
        super().__init__()
        self.server = server

    async def answer(self, obj: Object, attributes: Attributes) -> Object:
        spec = obj.get("spec") or {}
        token = str(spec.get("token") or "")
        if not token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        tokens = self.server.tokens
        audiences = list(spec.get("audiences") or []) or list(tokens.api_audiences)
        authenticator = tokens.authenticator()
        status: Object = {"user": {}}
        obj["status"] = status
        if authenticator is None:
            return obj
        try:
            response = await authenticator.authenticate_token(token, audiences)
        except AuthenticationError as error:
            status["error"] = str(error)
            return obj
        if response is None:
            status["error"] = "invalid bearer token"
            return obj
        status["authenticated"] = True
        status["user"] = with_authenticated_group(response.user).as_json()
        status["audiences"] = list(response.audiences)
        return obj
