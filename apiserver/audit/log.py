"""`--audit-log-path`: audit events as lines, one audit.k8s.io/v1 Event per line in `--audit-log-format json`
(the default) or kube's one-line ``legacy`` text, written as kube's log backend writes them in its default
blocking mode (each event before the request goes on), to standard output for "-" or to a file rotated as
lumberjack rotates kube's (:mod:`apiserver.audit.rotate`). With `--audit-log-truncate-enabled`, an event
larger than `--audit-log-truncate-max-event-size` loses its request and response objects, and is dropped
if it is still too large (kube's truncating backend)."""

from __future__ import annotations

import logging
import sys

import orjson

from apiserver.audit.bodies import TRUNCATED_ANNOTATION
from apiserver.audit.event import Event, micro_time
from apiserver.audit.options import LogOptions
from apiserver.audit.rotate import RotatingFile
from apiserver.schema.causes import go_quote

log = logging.getLogger(__name__)


class LogBackend:
    def __init__(self, options: LogOptions | str) -> None:
        self.options = LogOptions(options) if isinstance(options, str) else options
        self.file = (
            None
            if self.options.path == "-"
            else RotatingFile(
                self.options.path,
                self.options.max_size_mb,
                self.options.max_backups,
                self.options.max_age_days,
            )
        )

    def process_events(self, *events: Event) -> None:
        # one write per event (a line never interleaves with another's, nor is split between two files),
        # unbuffered, so that a reader tailing the file, or a crash, loses no acknowledged request
        for event in events:
            line = self._line(event)
            if line is None:
                continue
            if self.file is None:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
            else:
                self.file.write(line)

    def _line(self, event: Event) -> bytes | None:
        if self.options.format == "legacy":
            return legacy_line(event)
        line = orjson.dumps(event.as_json(), option=orjson.OPT_APPEND_NEWLINE)
        limit = self.options.max_event_size
        if not limit or len(line) <= limit:
            return line
        if event.level.records_request:
            document = event.as_json()
            document.pop("requestObject", None)
            document.pop("responseObject", None)
            document.setdefault("annotations", {})[TRUNCATED_ANNOTATION] = "true"
            line = orjson.dumps(document, option=orjson.OPT_APPEND_NEWLINE)
            if len(line) <= limit:
                return line
        log.error("audit event %s is too large even after truncating: dropped", event.audit_id)
        return None

    def close(self) -> None:
        if self.file is None:
            sys.stdout.buffer.flush()
        else:
            self.file.close()


def legacy_line(event: Event) -> bytes:
    """kube's EventString (k8s.io/apiserver pkg/audit/format.go), which `--audit-log-format legacy` writes."""
    user, groups = "<none>", "<none>"
    if event.user.name:
        user = event.user.name
        if event.user.groups:
            groups = ",".join(map(go_quote, event.user.groups))
    as_user, as_groups = "<self>", "<lookup>"
    if event.impersonated_user is not None:
        as_user = event.impersonated_user.name
        if event.impersonated_user.groups:
            as_groups = ",".join(map(go_quote, event.impersonated_user.groups))
    namespace = (event.object_ref or {}).get("namespace") or "<none>"
    response = (
        "<deferred>" if event.response_status is None else str(event.response_status.get("code"))
    )
    ip = event.source_ips[0] if event.source_ips else "<unknown>"
    fields = (
        ("id", event.audit_id),
        ("stage", event.stage.value),
        ("ip", ip),
        ("method", event.verb),
        ("user", user),
        ("groups", groups),
        ("as", as_user),
        ("asgroups", as_groups),
        ("user-agent", event.user_agent),
        ("namespace", namespace),
        ("uri", event.request_uri),
    )
    text = " ".join(f"{name}={go_quote(value)}" for name, value in fields)
    return f'{micro_time(event.received)} AUDIT: {text} response="{response}"\n'.encode()
