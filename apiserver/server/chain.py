"""The filter chain around the API server, composed here and nowhere else, in kube-apiserver's order
(k8s.io/apiserver pkg/server/config.go, DefaultBuildHandlerChain): request info → authentication → audit →
impersonation → max-in-flight → authorization → the APIServer; and the `serve` options that shape it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from apiserver.audit.log import LogBackend
from apiserver.audit.policy import MetadataPolicy
from apiserver.authentication.authenticator import Authenticator, request_authenticator
from apiserver.authorization.authorizer import AlwaysAllow, Authorizer
from apiserver.endpoints.http import ASGIApp, Receive, Scope, Send
from apiserver.filters.audit import AuditFilter, Auditor
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.authorization import AuthorizationFilter
from apiserver.filters.impersonation import ImpersonationFilter
from apiserver.filters.maxinflight import MaxInFlightFilter
from apiserver.filters.requestinfo import RequestInfoFilter
from apiserver.server.app import APIServer

KUBE_AUTHORIZATION_MODES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "Webhook", "RBAC", "Node")
SUPPORTED_AUTHORIZATION_MODES = ("AlwaysAllow",)


@dataclass(frozen=True, slots=True)
class ChainOptions:
    """The options of the chain, with kube-apiserver's flag names and defaults."""

    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    authorization_mode: str = "AlwaysAllow"
    """Comma-separated modes, asked in order (kube's --authorization-mode)."""
    audit_log_path: str = ""
    """Where audit events go as JSON lines ("-" for standard output); none are recorded without it."""

    @classmethod
    def from_flags(cls, values: Mapping[str, Any]) -> ChainOptions:
        """The options from parsed flags keyed by field name (as argparse and click both key them)."""
        return cls(
            **{field.name: values[field.name] for field in fields(cls) if field.name in values}
        )

    def validate(self) -> list[str]:
        """What is wrong with the options, worded as kube-apiserver words it where it has the check."""
        problems = []
        if self.max_requests_inflight < 0:
            problems.append("--max-requests-inflight can not be negative value")
        if self.max_mutating_requests_inflight < 0:
            problems.append("--max-mutating-requests-inflight can not be negative value")
        modes = [mode.strip() for mode in self.authorization_mode.split(",")]
        for mode in modes:
            if mode not in KUBE_AUTHORIZATION_MODES:
                problems.append(f'authorization-mode "{mode}" is not a valid mode')
            elif mode not in SUPPORTED_AUTHORIZATION_MODES:
                problems.append(
                    f'authorization-mode "{mode}" is not supported yet: the supported modes are'
                    f" {', '.join(SUPPORTED_AUTHORIZATION_MODES)}"
                )
        if len(set(modes)) != len(modes):
            problems.append(
                f'authorization-mode "{self.authorization_mode}" has mode specified more than once'
            )
        return problems

    def authorizer(self) -> Authorizer:
        """The authorizer of the (validated) modes: AlwaysAllow, the only one so far."""
        return AlwaysAllow()


@dataclass(frozen=True, slots=True)
class Flag:
    """One command-line flag of the chain's options, for whichever CLI library `serve` uses."""

    name: str
    type: type[int] | type[str]
    default: int | str
    help: str


_DEFAULTS = ChainOptions()
CHAIN_FLAGS = (
    Flag(
        "--max-requests-inflight",
        int,
        _DEFAULTS.max_requests_inflight,
        "read-only requests served at once (0: no limit); more are answered 429",
    ),
    Flag(
        "--max-mutating-requests-inflight",
        int,
        _DEFAULTS.max_mutating_requests_inflight,
        "mutating requests served at once (0: no limit); more are answered 429",
    ),
    Flag(
        "--authorization-mode",
        str,
        _DEFAULTS.authorization_mode,
        "comma-separated authorizers, asked in order (only AlwaysAllow so far)",
    ),
    Flag(
        "--audit-log-path",
        str,
        _DEFAULTS.audit_log_path,
        "append audit events (audit.k8s.io/v1, JSON lines) to this file; '-' for standard output",
    ),
)


class HandlerChain:
    """What uvicorn serves: HTTP requests pass the filters; lifespan events go straight to the server, so
    that no filter spends a check on them, and the audit backend is closed once the server has stopped."""

    def __init__(self, server: APIServer, handler: ASGIApp, auditor: Auditor | None) -> None:
        self.server = server
        self.handler = handler
        self.auditor = auditor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handler(scope, receive, send)
            return
        await self.server(scope, receive, send)
        if scope["type"] == "lifespan" and self.auditor is not None:
            self.auditor.backend.close()


def build_handler_chain(
    server: APIServer, options: ChainOptions, authenticators: Sequence[Authenticator] = ()
) -> HandlerChain:
    """The chain, built inside out; the server's authorizer judges both impersonation and the request,
    as kube's one authorizer does. Audit and the in-flight limits are left out when not configured."""
    authorizer = server.context.authorizer
    handler: ASGIApp = AuthorizationFilter(server, authorizer)
    if options.max_requests_inflight or options.max_mutating_requests_inflight:
        handler = MaxInFlightFilter(
            handler, options.max_requests_inflight, options.max_mutating_requests_inflight
        )
    handler = ImpersonationFilter(handler, authorizer)
    auditor = (
        Auditor(MetadataPolicy(), LogBackend(options.audit_log_path))
        if options.audit_log_path
        else None
    )
    if auditor is not None:
        handler = AuditFilter(handler, auditor)
    handler = AuthenticationFilter(handler, request_authenticator(authenticators), auditor)
    return HandlerChain(server, RequestInfoFilter(handler), auditor)
