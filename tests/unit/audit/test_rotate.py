"""The audit log's rotation, as lumberjack (which kube-apiserver's log backend writes through) rotates:
`--audit-log-maxsize` megabytes per file, rotated files named `<name>-<UTC 2006-01-02T15-04-05.000><ext>`,
`--audit-log-maxbackup` newest kept, `--audit-log-maxage` days by the time in the names."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from apiserver.audit.rotate import MEGABYTE, RotatingFile

LINE = b"x" * 1023 + b"\n"  # 1 KiB
BACKUP = re.compile(r"audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\Z")


def backups(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name != "audit.log")


def test_a_write_that_would_pass_max_size_goes_to_a_new_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    log = RotatingFile(str(path), max_size_mb=1)
    for _ in range(1024):  # exactly 1 MiB: no rotation yet
        log.write(LINE)
    assert backups(tmp_path) == []
    before = datetime.now(UTC).replace(microsecond=0)
    log.write(LINE)
    log.close()
    [backup] = backups(tmp_path)
    assert BACKUP.match(backup), backup
    stamp = datetime.strptime(backup[6:-4], "%Y-%m-%dT%H-%M-%S.%f").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)
    assert (tmp_path / backup).stat().st_size == MEGABYTE
    assert path.read_bytes() == LINE
    assert path.stat().st_mode & 0o777 == 0o600


def test_an_existing_log_counts_toward_max_size(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    path.write_bytes(LINE * 1024)
    log = RotatingFile(str(path), max_size_mb=1)
    log.write(LINE)
    log.close()
    assert len(backups(tmp_path)) == 1
    assert path.read_bytes() == LINE


def test_no_max_size_is_lumberjack_s_100_megabytes(tmp_path: Path) -> None:
    log = RotatingFile(str(tmp_path / "audit.log"))
    assert log.max_size == 100 * MEGABYTE
    with pytest.raises(ValueError, match="write length 104857601 exceeds maximum file size"):
        log.write(b"x" * (100 * MEGABYTE + 1))
    log.close()


def test_rotations_in_one_millisecond_lose_nothing(tmp_path: Path) -> None:
    log = RotatingFile(str(tmp_path / "audit.log"), max_size_mb=1)
    big = b"y" * (MEGABYTE - 1) + b"\n"
    for _ in range(5):
        log.write(big)
    log.close()
    assert len(backups(tmp_path)) == 4
    assert sum((tmp_path / name).stat().st_size for name in backups(tmp_path)) == 4 * MEGABYTE


def test_max_backups_keeps_the_newest(tmp_path: Path) -> None:
    old = [
        tmp_path / "audit-2026-11-01T00-00-00.000.log",
        tmp_path / "audit-2026-11-02T00-00-00.000.log",
        tmp_path / "audit-2026-11-03T00-00-00.000.log",
    ]
    for path in old:
        path.write_bytes(LINE)
    unrelated = tmp_path / "audit-notes.log"
    unrelated.write_bytes(LINE)
    log = RotatingFile(str(tmp_path / "audit.log"), max_size_mb=1, max_backups=2)
    log.write(LINE * 1024)
    log.write(LINE)  # rotates: four backups, the two newest kept
    log.close()
    kept = backups(tmp_path)
    assert "audit-notes.log" in kept
    kept.remove("audit-notes.log")
    assert len(kept) == 2
    assert old[2].name in kept
    assert not old[0].exists() and not old[1].exists()


def test_max_age_removes_backups_older_by_their_names(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    stale = tmp_path / f"audit-{(now - timedelta(days=3)).strftime('%Y-%m-%dT%H-%M-%S')}.000.log"
    fresh = tmp_path / f"audit-{(now - timedelta(hours=12)).strftime('%Y-%m-%dT%H-%M-%S')}.000.log"
    for path in (stale, fresh):
        path.write_bytes(LINE)
    log = RotatingFile(str(tmp_path / "audit.log"), max_size_mb=1, max_age_days=2)
    log.write(LINE * 1024)
    log.write(LINE)
    log.close()
    assert not stale.exists()
    assert fresh.exists()
    assert len(backups(tmp_path)) == 2


def test_a_sibling_s_rotation_is_followed_not_repeated(tmp_path: Path) -> None:
    """Two workers on one log: when one has rotated, the other writes on in the new file."""
    path = tmp_path / "audit.log"
    first = RotatingFile(str(path), max_size_mb=1)
    second = RotatingFile(str(path), max_size_mb=1)
    first.write(LINE * 1000)
    second.size = first.size  # both appended to the one file
    first.write(LINE * 100)  # rotates
    second.write(LINE * 100)  # would pass the size it knows: finds the new file instead
    first.close()
    second.close()
    assert len(backups(tmp_path)) == 1
    assert path.read_bytes() == LINE * 200
