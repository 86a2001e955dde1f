"""Service-account issuer discovery (kubernetes pkg/routes/openidmetadata.go): the OpenID Connect
configuration and the JWKS of the token keys, so that another party can verify the server's tokens. Both are
the same for every request, cacheable for an hour, as kube serves them."""

from __future__ import annotations

from apiserver.authentication.jwtkeys import JWKS_PATH, JWTKeys
from apiserver.endpoints.http import Request, Send, respond
from apiserver.machinery import errors

_JWKS_TYPE = b"application/jwk-set+json"
_JSON_TYPE = b"application/json"
_CACHE = [(b"cache-control", b"public, max-age=3600")]


async def serve_openid(request: Request, send: Send, keys: JWTKeys, path: str) -> None:
    if request.method not in ("GET", "HEAD"):
        raise errors.method_not_allowed()
    if path == JWKS_PATH:
        await respond(send, 200, keys.jwks(), _JWKS_TYPE, headers=_CACHE)
    else:
        await respond(send, 200, keys.openid_configuration(), _JSON_TYPE, headers=_CACHE)
