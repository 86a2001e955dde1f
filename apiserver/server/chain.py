"""The filter chain around the API server, composed here and nowhere else, in kube-apiserver's order
(k8s.io/apiserver pkg/server/config.go, DefaultBuildHandlerChain): audit ID → request info → metrics →
request deadline and timeout → authentication → audit → impersonation → priority and fairness (or
max-in-flight) → authorization → the APIServer, as `serve`'s options (server/options.py) shape it."""

from __future__ import annotations

from collections.abc import Sequence

from apiserver.audit.bodies import MAX_RECORDED_BODY, protobuf_codecs
from apiserver.audit.internal import InternalAudit
from apiserver.audit.log import LogBackend
from apiserver.audit.policy import MetadataPolicy
from apiserver.audit.policyfile import load_policy_file
from apiserver.authentication.authenticator import Authenticator, request_authenticator
from apiserver.authentication.token import BearerTokenAuthenticator
from apiserver.authentication.user import ANONYMOUS, UNSECURED
from apiserver.endpoints.http import Receive, Scope, Send
from apiserver.filters.audit import AuditFilter, Auditor
from apiserver.filters.auditinit import AuditInitFilter
from apiserver.filters.authentication import AuthenticationFilter
from apiserver.filters.authorization import AuthorizationFilter
from apiserver.filters.fairness import PriorityAndFairnessFilter
from apiserver.filters.impersonation import ImpersonationFilter, ImpersonationKinds
from apiserver.filters.maxinflight import MaxInFlightFilter
from apiserver.filters.metrics import MetricsFilter
from apiserver.filters.pipeline import Pipeline, Step
from apiserver.filters.requestinfo import RequestInfoFilter
from apiserver.filters.timeout import TimeoutFilter
from apiserver.server.app import APIServer
from apiserver.server.options import ChainOptions


class HandlerChain(Pipeline):
    """What uvicorn serves: HTTP requests pass the filters; lifespan events go straight to the server, so
    that no filter spends a check on them, and the audit backend is closed once the server has stopped."""

    def __init__(self, server: APIServer, steps: Sequence[Step], auditor: Auditor | None) -> None:
        super().__init__(steps, server.serve_http)
        self.server = server
        self.auditor = auditor

    async def not_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.server(scope, receive, send)
        if scope["type"] == "lifespan":
            self.close()

    def close(self) -> None:
        """Once the server has stopped (after its lifespan, or `apiforge serve`'s own stop)."""
        if self.auditor is not None:
            self.auditor.backend.close()


def build_handler_chain(
    server: APIServer,
    options: ChainOptions,
    authenticators: Sequence[Authenticator] = (),
    insecure: bool = False,
) -> HandlerChain:
    """The chain's steps in order; the server's authorizer judges both impersonation and the request,
    as kube's one authorizer does. Audit and the in-flight limits are left out when not configured.
    ``insecure`` (--insecure-serving): a request without credentials is kube's insecure-port user,
    ``system:unsecured`` in ``system:masters``, whatever --anonymous-auth says."""
    authorizer = server.context.authorizer
    auditor = _auditor(server, options)
    if auditor is not None:
        server.context.audit = InternalAudit(auditor.policy, auditor.backend)
    token_authenticator = server.context.tokens.authenticator()
    if token_authenticator is not None:  # the token file's and the service accounts'
        authenticators = [*authenticators, BearerTokenAuthenticator(token_authenticator)]
    authenticator = request_authenticator(
        authenticators,
        anonymous=options.anonymous_auth or insecure,
        anonymous_user=UNSECURED if insecure else ANONYMOUS,
    )
    steps: list[Step] = [
        AuditInitFilter(),
        RequestInfoFilter(),
        MetricsFilter(server.metrics),
        # kube wraps WithTimeoutForNonLongRunningRequests, then WithRequestDeadline, just inside
        # WithRequestInfo
        TimeoutFilter(options.request_timeout, options.min_request_timeout, auditor),
        AuthenticationFilter(authenticator, auditor),
    ]
    if auditor is not None:
        steps.append(AuditFilter(auditor))
    # what is impersonated besides users and groups, from the kinds that define it (builtin/ hands it over)
    steps.append(
        ImpersonationFilter(authorizer, server.context.kind_option(ImpersonationKinds, None))
    )
    server_limit = options.max_requests_inflight + options.max_mutating_requests_inflight
    if server_limit and options.enable_priority_and_fairness:
        steps.append(
            PriorityAndFairnessFilter(server_limit, options.queue_wait_limit, server.stored_count)
        )
    elif server_limit:
        steps.append(
            MaxInFlightFilter(options.max_requests_inflight, options.max_mutating_requests_inflight)
        )
    steps.append(AuthorizationFilter(authorizer))
    return HandlerChain(server, steps, auditor)


def _auditor(server: APIServer, options: ChainOptions) -> Auditor | None:
    """The log's auditor: none without `--audit-log-path`, as in kube also when a policy file is given;
    every request at Metadata without a policy file (apiforge's earlier behaviour, where kube records
    nothing). With truncation on, a body larger than an event may be is not even kept."""
    audit = options.audit
    if not options.audit_log_path:
        return None
    policy = load_policy_file(audit.policy_file) if audit.policy_file else MetadataPolicy()
    max_body = audit.truncate_max_event_size if audit.truncate_enabled else MAX_RECORDED_BODY
    return Auditor(
        policy,
        LogBackend(audit.log_options(options.audit_log_path)),
        protobuf_codecs(server.scheme),
        max_body,
    )
