"""The audit log file with kube-apiserver's rotation (gopkg.in/natefinch/lumberjack.v2, which kube's log
backend writes through): before a write would take the file past ``max_size`` bytes, the file is renamed to
``<name>-<UTC time as 2006-01-02T15-04-05.000><ext>`` beside it (``audit-2026-12-01T16-35-34.123.log``) and a
new one begun; then backups past ``max_backups`` (the newest kept) or older than ``max_age`` days, by the time
in their names, are removed (0: no limit). A new file is created 0600 (its directory 0700, as kube's
ensureLogFile makes it): an audit log tells who did what, and is nobody else's to read."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

MEGABYTE = 1024 * 1024
DEFAULT_MAX_SIZE_MB = 100
"""lumberjack's size when none is given (`--audit-log-maxsize 0`)."""
_BACKUP_TIME = "%Y-%m-%dT%H-%M-%S"


class RotatingFile:
    def __init__(
        self, path: str, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0
    ) -> None:
        self.path = Path(path)
        self.max_size = (max_size_mb or DEFAULT_MAX_SIZE_MB) * MEGABYTE
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._file = self._open(os.O_APPEND)
        self.size = self.path.stat().st_size
        stem, ext = os.path.splitext(self.path.name)
        self._backup = re.compile(
            re.escape(stem) + r"-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3})" + re.escape(ext) + r"\Z"
        )

    def _open(self, mode: int) -> int:
        return os.open(self.path, os.O_CREAT | os.O_WRONLY | mode, 0o600)

    def write(self, data: bytes) -> None:
        """Write ``data`` whole into one file (a line is never split across two); raises OSError, and
        ValueError for data larger than a file may be, as lumberjack refuses it."""
        if len(data) > self.max_size:
            raise ValueError(f"write length {len(data)} exceeds maximum file size {self.max_size}")
        if self.size + len(data) > self.max_size and not self._reopened():
            self.rotate()
        view = memoryview(data)
        while view:
            view = view[os.write(self._file, view) :]
        self.size += len(data)

    def _reopened(self) -> bool:
        """Whether another process (a `--workers` sibling) rotated the log already: then this one goes on in
        the new file instead of rotating again, unless the new file is full too."""
        try:
            renamed = os.stat(self.path).st_ino != os.fstat(self._file).st_ino
        except FileNotFoundError:
            renamed = True
        if not renamed:
            return False
        os.close(self._file)
        self._file = self._open(os.O_APPEND)
        self.size = os.fstat(self._file).st_size
        return self.size < self.max_size

    def rotate(self) -> None:
        os.close(self._file)
        now = datetime.now(UTC)
        backup = self._backup_path(now)
        while (
            backup.exists()
        ):  # two rotations in one millisecond: lumberjack would overwrite the first
            now += timedelta(milliseconds=1)
            backup = self._backup_path(now)
        self.path.rename(backup)
        self._file = self._open(os.O_TRUNC)
        self.size = 0
        self._remove_old(now)

    def _backup_path(self, when: datetime) -> Path:
        stem, ext = os.path.splitext(self.path.name)
        stamp = f"{when.strftime(_BACKUP_TIME)}.{when.microsecond // 1000:03d}"
        return self.path.with_name(f"{stem}-{stamp}{ext}")

    def backups(self) -> list[tuple[datetime, Path]]:
        """The rotated files beside the log, newest first, by the time in their names."""
        found = []
        for entry in self.path.parent.iterdir():
            match = self._backup.match(entry.name)
            if match:
                when = datetime.strptime(match.group(1), _BACKUP_TIME + ".%f").replace(tzinfo=UTC)
                found.append((when, entry))
        return sorted(found, reverse=True)

    def _remove_old(self, now: datetime) -> None:
        """lumberjack's millRunOnce, without compression."""
        if not self.max_backups and not self.max_age_days:
            return
        backups = self.backups()
        doomed = backups[self.max_backups :] if self.max_backups else []
        kept = backups[: self.max_backups] if self.max_backups else backups
        if self.max_age_days:
            cutoff = now - timedelta(days=self.max_age_days)
            doomed += [backup for backup in kept if backup[0] < cutoff]
        for _, path in doomed:
            path.unlink(missing_ok=True)

    def close(self) -> None:
        os.close(self._file)
