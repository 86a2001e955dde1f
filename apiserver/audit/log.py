"""`--audit-log-path`: audit events as JSON lines, one audit.k8s.io/v1 Event per line (kube's log backend
in its default blocking mode: each event is written before the request goes on), "-" for standard output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

import orjson

from apiserver.audit.event import Event


class LogBackend:
    def __init__(self, path: str) -> None:
        self.stream: IO[bytes] = (
            sys.stdout.buffer if path == "-" else Path(path).open("ab")  # noqa: SIM115 (lives with the server)
        )

    def process_events(self, *events: Event) -> None:
        # one write per event (a line never interleaves with another's) and a flush, so that a reader
        # tailing the file, or a crash, loses no acknowledged request
        for event in events:
            self.stream.write(orjson.dumps(event.as_json(), option=orjson.OPT_APPEND_NEWLINE))
        self.stream.flush()

    def close(self) -> None:
        if self.stream is sys.stdout.buffer:
            self.stream.flush()
        else:
            self.stream.close()
