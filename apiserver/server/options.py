"""The options of `apiforge serve`, named as kube-apiserver's flags, as click options (the one CLI library of
every apiforge subcommand). Kept apart from the server itself so that the command line (and `--help`) loads
without uvicorn or the runtime."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click
from click.decorators import FC

from apiserver.audit.options import (
    DEFAULT_AUDIT_OPTIONS,
    DEFAULT_MAX_EVENT_SIZE,
    FORMATS,
    AuditOptions,
)
from apiserver.machinery.goduration import parse_go_duration
from apiserver.server.controllers import LeaderElection
from apiserver.server.delegation_options import DelegationOptions, delegation_flags
from apiserver.server.limits import ConnectionLimits
from apiserver.server.tlsoptions import TLSOptions, tls_flags
from apiserver.server.token_options import TokenOptions, token_flags

__all__ = ["ChainOptions", "ServeOptions", "serve_options"]

KUBE_AUTHORIZATION_MODES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "Webhook", "RBAC", "Node")
SUPPORTED_AUTHORIZATION_MODES = ("AlwaysAllow", "RBAC")


DEFAULT_REQUEST_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class ChainOptions:
    """The options of the filter chain (apiserver/server/chain.py), with kube-apiserver's flag names and
    defaults."""

    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    authorization_mode: str = "RBAC"
    """Comma-separated modes, asked in order (kube's --authorization-mode). RBAC by default, as kubeadm and
    k3s configure kube-apiserver (whose own flag default is AlwaysAllow): secure by default."""
    audit_log_path: str = ""
    """Where audit events go as JSON lines ("-" for standard output); none are recorded without it."""
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    """Seconds a non-long-running request may take before it is answered 504 (kube's 1m0s; 0: none)."""
    min_request_timeout: float = 1800.0
    """The shortest default lifetime of a watch, in seconds; each lasts a random time up to twice it."""
    audit: AuditOptions = DEFAULT_AUDIT_OPTIONS
    """The audit policy and the log's rotation, format and truncation (`--audit-*`)."""
    anonymous_auth: bool = True
    """Whether a request without credentials is served as system:anonymous (kube's --anonymous-auth,
    default true) or refused 401."""
    enable_priority_and_fairness: bool = True
    """kube's default: the two in-flight limits are summed into one concurrency limit, shared out among
    priority levels with fair queuing per flow (filters/fairness.py); false: the two limits apply apart,
    and a request past them is refused at once (filters/maxinflight.py)."""

    @property
    def queue_wait_limit(self) -> float:
        """How long a request may wait in a priority level's queue: a quarter of --request-timeout, as kube
        derives it (15 s by default)."""
        return (self.request_timeout or DEFAULT_REQUEST_TIMEOUT) / 4

    @property
    def authorization_modes(self) -> tuple[str, ...]:
        """The modes of ``--authorization-mode``, in the order they are asked."""
        return tuple(mode.strip() for mode in self.authorization_mode.split(","))

    def validate(self) -> list[str]:
        """What is wrong with the options, worded as kube-apiserver words it where it has the check."""
        problems = []
        if self.max_requests_inflight < 0:
            problems.append("--max-requests-inflight can not be negative value")
        if self.max_mutating_requests_inflight < 0:
            problems.append("--max-mutating-requests-inflight can not be negative value")
        if self.request_timeout < 0:
            problems.append("--request-timeout can not be negative value")
        if self.min_request_timeout < 0:
            problems.append("--min-request-timeout can not be negative value")
        modes = self.authorization_modes
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
        problems.extend(self.audit.validate(self.audit_log_path))
        return problems


_CHAIN_DEFAULTS = ChainOptions()
_CONNECTION_DEFAULTS = ConnectionLimits()
_TLS_DEFAULTS = TLSOptions()
_TOKEN_DEFAULTS = TokenOptions()
_ELECTION_DEFAULTS = LeaderElection()
_DELEGATION_DEFAULTS = DelegationOptions()


@dataclass(frozen=True)
class ServeOptions:
    """What `apiforge serve` was asked for, validated."""

    data_dir: Path
    bind_address: str
    port: int
    storage: str
    etcd_servers: list[str]
    etcd_prefix: str
    etcd_compaction_interval: float
    workers: int
    log_level: str
    chain: ChainOptions = _CHAIN_DEFAULTS
    connection: ConnectionLimits = _CONNECTION_DEFAULTS
    tls: TLSOptions = _TLS_DEFAULTS
    tokens: TokenOptions = _TOKEN_DEFAULTS
    delegation: DelegationOptions = _DELEGATION_DEFAULTS
    kind_options: Mapping[type, object] = field(default_factory=dict)
    """What the kinds' own flags (``KindFlags``) parsed to, by its type; the server hands it on to them."""
    verbose: bool = False
    """A failure to start shows its traceback too, not only its one-line reason."""
    shutdown_delay: float = 0.0
    """``--shutdown-delay-duration``: seconds between the shutdown signal and the listener closing, with
    /readyz failing meanwhile, so that load balancers stop sending first."""
    leader_election: LeaderElection = _ELECTION_DEFAULTS


class GoDuration(click.ParamType):  # type: ignore[type-arg]
    """A Go duration ("1m0s", "30s"), as kube's duration flags take it, in seconds."""

    name = "duration"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return parse_go_duration(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)


def duration_flag(flag: str, default: str, help_text: str) -> Callable[[FC], FC]:
    """A flag that takes a Go duration, as kube's duration flags do."""
    return click.option(
        flag,
        type=GoDuration(),
        default=default,
        show_default=True,
        help=f"{help_text} A Go duration.",
    )


def _hidden_seconds(flag: str, default: float, help_text: str) -> Callable[[FC], FC]:
    """A connection timeout: apiforge's own flag (kube-apiserver has none), hidden from --help."""
    return click.option(
        flag, type=click.FloatRange(min=0), default=default, hidden=True, help=help_text
    )


def _audit_options(command: Callable[..., None]) -> Callable[..., None]:
    """kube-apiserver's `--audit-*` flags (beside `--audit-log-path`), handed on as one AuditOptions."""

    @click.option(
        "--audit-policy-file",
        default="",
        help="An audit.k8s.io/v1 Policy (YAML or JSON): which requests are recorded, and how much of them."
        " Without it, --audit-log-path records every request at the Metadata level.",
    )
    @click.option(
        "--audit-log-maxsize",
        type=int,
        default=0,
        help="Megabytes the audit log reaches before it is rotated (0: 100).",
    )
    @click.option(
        "--audit-log-maxbackup",
        type=int,
        default=0,
        help="Rotated audit logs kept, the newest (0: all).",
    )
    @click.option(
        "--audit-log-maxage",
        type=int,
        default=0,
        help="Days a rotated audit log is kept, by the time in its name (0: forever).",
    )
    @click.option(
        "--audit-log-format",
        default="json",
        show_default=True,
        help=f"The audit log's lines: {' or '.join(FORMATS)}.",
    )
    @click.option(
        "--audit-log-truncate-enabled",
        is_flag=True,
        help="Drop the request and response objects of an audit event larger than"
        " --audit-log-truncate-max-event-size (and the event, if it is still larger).",
    )
    @click.option(
        "--audit-log-truncate-max-event-size",
        type=int,
        default=DEFAULT_MAX_EVENT_SIZE,
        show_default=True,
        help="Bytes an audit event may take before it is truncated.",
    )
    @functools.wraps(command)
    def parsed(
        *args: object,
        audit_policy_file: str,
        audit_log_maxsize: int,
        audit_log_maxbackup: int,
        audit_log_maxage: int,
        audit_log_format: str,
        audit_log_truncate_enabled: bool,
        audit_log_truncate_max_event_size: int,
        **kwargs: object,
    ) -> None:
        audit = AuditOptions(
            audit_policy_file,
            audit_log_maxsize,
            audit_log_maxbackup,
            audit_log_maxage,
            audit_log_format,
            audit_log_truncate_enabled,
            audit_log_truncate_max_event_size,
        )
        command(*args, audit=audit, **kwargs)

    return parsed


KindFlags = Callable[[Callable[..., None]], Callable[..., None]]
"""The generic hook for flags that belong to kinds, not to the runtime (kube-apiserver's Service ranges are
core's): a decorator that adds click options and hands the command it wraps what they parse to, as one more
entry of its ``kind_options`` argument (by the value's type)."""


def serve_options(
    command: Callable[[ServeOptions], None], kind_flags: Sequence[KindFlags] = ()
) -> Callable[..., None]:
    """Give ``command`` the serve options, the runtime's and ``kind_flags``': click parses them, this checks
    how they combine (a usage error, exit 2, as a wrong flag) and hands ``command`` one ServeOptions."""

    @click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path(".apiforge-data"),
        show_default=True,
        help="Where the SQLite database and admin.kubeconfig live.",
    )
    @click.option(
        "--bind-address",
        default="127.0.0.1",
        show_default=True,
        help="The address to listen on (0.0.0.0 or :: for every interface).",
    )
    @click.option(
        "--port",
        "--secure-port",
        "port",
        type=click.IntRange(0, 65535),
        default=6443,
        show_default=True,
        help="The port to listen on.",
    )
    @click.option(
        "--storage",
        type=click.Choice(["sqlite", "memory", "etcd"]),
        default=None,
        help="sqlite (embedded, the default), memory (tests), or etcd (the default with --etcd-servers).",
    )
    @click.option("--etcd-servers", default="", help="Comma-separated etcd client URLs.")
    @click.option(
        "--etcd-prefix",
        default="/registry",
        show_default=True,
        help="The prefix of every etcd key.",
    )
    @click.option(
        "--etcd-compaction-interval",
        type=float,
        default=300.0,
        show_default=True,
        help="Seconds between compactions of the storage history (0 disables).",
    )
    @click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Server processes on the one port, each a replica with its own watch cache (etcd only):"
        " one Python process uses one core.",
    )
    @click.option("--log-level", default="warning", show_default=True, help="uvicorn's log level.")
    @click.option(
        "-v",
        "--verbose",
        is_flag=True,
        help="On a failure to start, print the traceback as well as the reason.",
    )
    @click.option(
        "--max-requests-inflight",
        type=int,
        default=_CHAIN_DEFAULTS.max_requests_inflight,
        show_default=True,
        help="Read-only requests served at once (0: no limit); with priority and fairness, summed with"
        " --max-mutating-requests-inflight into the server's concurrency limit.",
    )
    @click.option(
        "--max-mutating-requests-inflight",
        type=int,
        default=_CHAIN_DEFAULTS.max_mutating_requests_inflight,
        show_default=True,
        help="Mutating requests served at once (0: no limit); with priority and fairness, summed with"
        " --max-requests-inflight into the server's concurrency limit.",
    )
    @click.option(
        "--anonymous-auth",
        type=bool,
        default=_CHAIN_DEFAULTS.anonymous_auth,
        show_default=True,
        help="Serve requests without credentials as system:anonymous (RBAC lets it read public info"
        " only); false: refuse them 401.",
    )
    @click.option(
        "--enable-priority-and-fairness",
        type=bool,
        default=_CHAIN_DEFAULTS.enable_priority_and_fairness,
        show_default=True,
        help="Share the two in-flight limits, summed, among priority levels with fair queuing per user"
        " (system:masters and health probes exempt); false: refuse past each limit at once.",
    )
    @click.option(
        "--authorization-mode",
        default=_CHAIN_DEFAULTS.authorization_mode,
        show_default=True,
        help="Comma-separated authorizers, asked in order: RBAC, AlwaysAllow.",
    )
    @click.option(
        "--audit-log-path",
        default=_CHAIN_DEFAULTS.audit_log_path,
        help="Append audit events (audit.k8s.io/v1, JSON lines) to this file; '-' for standard output.",
    )
    @_audit_options
    @click.option(
        "--request-timeout",
        type=GoDuration(),
        default="1m0s",
        show_default=True,
        help="How long a non-long-running request may take before it is answered 504 (a Go duration).",
    )
    @duration_flag(
        "--leader-elect-lease-duration",
        "15s",
        "On etcd, how long a replica waits after the leader's last renewal before it takes over the"
        " leader-only controllers (kube-controller-manager's flag).",
    )
    @duration_flag(
        "--leader-elect-renew-deadline",
        "10s",
        "How long the leader retries renewing before it gives the leadership up.",
    )
    @duration_flag(
        "--leader-elect-retry-period",
        "2s",
        "How often a replica tries to acquire or renew the leadership.",
    )
    @click.option(
        "--min-request-timeout",
        type=int,
        default=int(_CHAIN_DEFAULTS.min_request_timeout),
        show_default=True,
        help="Seconds a watch without timeoutSeconds lasts at least (at random, up to twice it).",
    )
    @click.option(
        "--shutdown-delay-duration",
        type=GoDuration(),
        default="0s",
        show_default=True,
        help="After SIGTERM, keep serving this long with /readyz failing before shutting down, so that"
        " load balancers stop sending first (a Go duration; a second signal ends it at once).",
    )
    @_hidden_seconds(
        "--read-header-timeout",
        _CONNECTION_DEFAULTS.read_header_timeout,
        "Seconds a client has to send a request's headers (kube's net/http ReadHeaderTimeout).",
    )
    @_hidden_seconds(
        "--read-body-timeout",
        _CONNECTION_DEFAULTS.read_body_timeout,
        "Seconds a client has to send a request's body once its headers are in.",
    )
    @_hidden_seconds(
        "--idle-timeout",
        _CONNECTION_DEFAULTS.idle_timeout,
        "Seconds an idle keep-alive connection is kept (kube's net/http IdleTimeout).",
    )
    @tls_flags
    @token_flags
    @delegation_flags
    @functools.wraps(command)
    def parsed(
        data_dir: Path,
        bind_address: str,
        port: int,
        storage: str | None,
        etcd_servers: str,
        etcd_prefix: str,
        etcd_compaction_interval: float,
        workers: int,
        log_level: str,
        verbose: bool,
        max_requests_inflight: int,
        max_mutating_requests_inflight: int,
        anonymous_auth: bool,
        enable_priority_and_fairness: bool,
        authorization_mode: str,
        audit_log_path: str,
        request_timeout: float,
        leader_elect_lease_duration: float,
        leader_elect_renew_deadline: float,
        leader_elect_retry_period: float,
        min_request_timeout: int,
        shutdown_delay_duration: float,
        read_header_timeout: float,
        read_body_timeout: float,
        idle_timeout: float,
        tls: TLSOptions,
        audit: AuditOptions,
        tokens: TokenOptions,
        delegation: DelegationOptions,
        kind_options: dict[type, object],
    ) -> None:
        chain = ChainOptions(
            max_requests_inflight,
            max_mutating_requests_inflight,
            authorization_mode,
            audit_log_path,
            request_timeout,
            float(min_request_timeout),
            audit,
            anonymous_auth,
            enable_priority_and_fairness,
        )
        problems = chain.validate()
        if problems:
            raise click.UsageError("; ".join(problems))
        servers = [url.strip() for url in etcd_servers.split(",") if url.strip()]
        storage = storage or ("etcd" if servers else "sqlite")
        if storage == "etcd" and not servers:
            raise click.UsageError("--storage etcd needs --etcd-servers")
        election = LeaderElection(
            leader_elect_lease_duration, leader_elect_renew_deadline, leader_elect_retry_period
        )
        if not 0 < election.retry_period < election.renew_deadline < election.lease_duration:
            # kube-controller-manager's leaderelection.NewLeaderElector refuses the same
            raise click.UsageError(
                "leader election needs 0 < --leader-elect-retry-period < "
                "--leader-elect-renew-deadline < --leader-elect-lease-duration"
            )
        if workers > 1 and storage != "etcd":
            raise click.UsageError(
                f"--workers {workers} needs --storage etcd: {storage} storage belongs to one process"
            )
        command(
            ServeOptions(
                data_dir,
                bind_address,
                port,
                storage,
                servers,
                etcd_prefix,
                etcd_compaction_interval,
                workers,
                log_level,
                chain,
                ConnectionLimits(read_header_timeout, read_body_timeout, idle_timeout),
                tls,
                tokens,
                delegation,
                kind_options,
                verbose,
                shutdown_delay_duration,
                election,
            )
        )

    with_kinds = parsed
    for flags in kind_flags:
        with_kinds = flags(with_kinds)

    @functools.wraps(with_kinds)
    def seeded(*args: object, **kwargs: object) -> None:
        with_kinds(*args, kind_options={}, **kwargs)

    return seeded
