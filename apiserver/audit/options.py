"""kube-apiserver's audit flags beside `--audit-log-path` (k8s.io/apiserver pkg/server/options/audit.go): the
policy file, the log's rotation, format and truncation; validated with kube's words. Light to import, as
the command line's options are (server/options.py): the policy file's reader comes in only to validate."""

from __future__ import annotations

from dataclasses import dataclass

FORMATS = ("legacy", "json")
"""kube's AllowedFormats, in its order."""
DEFAULT_MAX_EVENT_SIZE = 100 * 1024
"""kube's `--audit-log-truncate-max-event-size` default (102400 bytes)."""


@dataclass(frozen=True, slots=True)
class LogOptions:
    """The log backend's options."""

    path: str
    max_size_mb: int = 0
    """0: lumberjack's 100 MB."""
    max_backups: int = 0
    max_age_days: int = 0
    format: str = "json"
    max_event_size: int = 0
    """Bytes an event may have before its objects are dropped (0: `--audit-log-truncate-enabled` off)."""


@dataclass(frozen=True, slots=True)
class AuditOptions:
    policy_file: str = ""
    """An audit.k8s.io/v1 Policy; without it `--audit-log-path` records every request at Metadata."""
    max_size_mb: int = 0
    max_backups: int = 0
    max_age_days: int = 0
    format: str = "json"
    truncate_enabled: bool = False
    truncate_max_event_size: int = DEFAULT_MAX_EVENT_SIZE

    def validate(self, log_path: str) -> list[str]:
        """What is wrong, as kube's AuditOptions.Validate and the policy loading say it. A policy file is
        read even without a log, as kube reads it: a broken one fails the start either way."""
        problems = []
        if self.policy_file:
            # YAML and the schema rules load only when a policy file is given (not for --help)
            from apiserver.audit.policyfile import PolicyFileError, load_policy_file

            try:
                load_policy_file(self.policy_file)
            except PolicyFileError as error:
                problems.append(f"loading audit policy file: {error}")
        if not log_path:
            return problems
        if self.truncate_enabled and self.truncate_max_event_size <= 0:
            problems.append(
                f"invalid audit truncate log max event size {self.truncate_max_event_size},"
                " must be a positive number"
            )
        if self.format not in FORMATS:
            problems.append(
                f'invalid audit log format {self.format}, allowed formats are "{",".join(FORMATS)}"'
            )
        for flag, value in (
            ("--audit-log-maxage", self.max_age_days),
            ("--audit-log-maxbackup", self.max_backups),
            ("--audit-log-maxsize", self.max_size_mb),
        ):
            if value < 0:
                problems.append(f"{flag} {value} can't be a negative number")
        return problems

    def log_options(self, path: str) -> LogOptions:
        return LogOptions(
            path,
            self.max_size_mb,
            self.max_backups,
            self.max_age_days,
            self.format,
            self.truncate_max_event_size if self.truncate_enabled else 0,
        )


DEFAULT_AUDIT_OPTIONS = AuditOptions()
