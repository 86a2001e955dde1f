"""The server exactly as ``apiforge serve`` assembles it (APIServer and its filter chain), as an ASGI app built
in the caller's process: the one place both the pytest fixtures (apiforge.testing.server) and the project's own
in-process tests construct it, so what the constructor and the chain take changes here only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from apiserver.authentication.authenticator import Authenticator
from apiserver.authentication.token import TokenAuthentication
from apiserver.server.apis import APIs
from apiserver.server.app import APIServer
from apiserver.server.chain import HandlerChain, build_handler_chain
from apiserver.server.options import ChainOptions
from apiserver.storage import MemoryStorage, Storage
from builtin.kindfacts import KIND_FACTS


def build_app(
    apis: APIs,
    openapi_dir: Path,
    storage: Storage | None = None,
    *,
    authorization_mode: str = "AlwaysAllow",
    authenticators: Sequence[Authenticator] = (),
    tokens: TokenAuthentication | None = None,
    insecure: bool = False,
    secure_port: int = 6443,
) -> HandlerChain:
    """``apis`` served over ``storage`` (a fresh memory store by default) behind the filter chain, with
    ``--authorization-mode``, the ``authenticators`` given and ``tokens`` as its bearer-token authentication
    (no token issued by default). ``insecure``: a request without credentials is ``system:unsecured`` in
    ``system:masters`` (``--insecure-serving``); ``secure_port`` is the port the ``kubernetes`` Service
    names. The built-in kinds hand the impersonation filter its kinds, as `apiforge serve`'s do, whatever
    ``apis`` serves; the other kind options keep their defaults."""
    options = ChainOptions(authorization_mode=authorization_mode)
    server = APIServer(
        apis,
        storage or MemoryStorage(),
        openapi_dir,
        authorization_modes=options.authorization_modes,
        tokens=tokens,
        kind_options=dict(KIND_FACTS),
        secure_port=secure_port,
    )
    return build_handler_chain(server, options, authenticators, insecure=insecure)
