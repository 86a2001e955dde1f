"""SQLite-only guarantees: state survives reopening and ``kill -9``; a data dir has one owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from apiserver.storage import DataDirLockedError, SQLiteStorage

REPO_ROOT = Path(__file__).resolve().parents[3]
PREFIX = "/registry/durable/"
ACKNOWLEDGED_BEFORE_KILL = 400

# Eight concurrent creators, so the kill lands in the middle of group commits; a key is printed only
# once its create() has returned, i.e. once it is acknowledged.
WRITER = """
import asyncio, sys
from pathlib import Path
from apiserver.storage import SQLiteStorage

async def creator(storage, worker):
    for i in range(10**9):
        key = f"/registry/durable/{worker}/{i:09d}"
        await storage.create(key, key.encode())
        print(key, flush=True)

async def main():
    storage = SQLiteStorage(Path(sys.argv[1]))
    await storage.start()
    await asyncio.gather(*(creator(storage, worker) for worker in range(8)))

asyncio.run(main())
"""

OPENER = """
import asyncio, sys
from pathlib import Path
from apiserver.storage import SQLiteStorage

async def main():
    storage = SQLiteStorage(Path(sys.argv[1]))
    try:
        await storage.start()
    except Exception as err:
        print(type(err).__name__, err)
    else:
        print("opened")
    finally:
        await storage.close()

asyncio.run(main())
"""


def python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT)}


async def test_data_revisions_and_compaction_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    storage = SQLiteStorage(path)
    await storage.start()
    await storage.create(PREFIX + "a", b"a1")
    await storage.update(PREFIX + "a", b"a2", 1)
    await storage.create(PREFIX + "b", b"b1")
    await storage.delete(PREFIX + "b")  # the last row, which compaction removes
    await storage.compact(4)
    await storage.close()

    reopened = SQLiteStorage(path)
    await reopened.start()
    try:
        assert await reopened.current_revision() == 4
        assert [
            (kv.key, kv.value, kv.mod_revision) for kv in (await reopened.list(PREFIX)).items
        ] == [(PREFIX + "a", b"a2", 2)]
        with pytest.raises(Exception, match="compacted"):
            await reopened.list(PREFIX, revision=3)
        assert (await reopened.create(PREFIX + "c", b"")).mod_revision == 5
    finally:
        await reopened.close()


async def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    acknowledged: list[str] = []
    with subprocess.Popen(
        python(WRITER, str(path)), stdout=subprocess.PIPE, text=True, env=child_env()
    ) as writer:
        assert writer.stdout is not None
        while len(acknowledged) < ACKNOWLEDGED_BEFORE_KILL:
            line = writer.stdout.readline()
            assert line, f"writer exited early with {writer.wait()}"
            acknowledged.append(line.strip())
        writer.send_signal(signal.SIGKILL)
        acknowledged += [line.strip() for line in writer.stdout if line.strip()]
    assert writer.returncode == -signal.SIGKILL

    storage = SQLiteStorage(path)  # the lock died with the writer
    await storage.start()
    try:
        stored = {kv.key: kv.value for kv in (await storage.list(PREFIX)).items}
    finally:
        await storage.close()
    missing = [key for key in acknowledged if stored.get(key) != key.encode()]
    assert missing == []
    assert len(stored) >= len(acknowledged)


async def test_a_second_opener_of_one_data_dir_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    owner = SQLiteStorage(path)
    await owner.start()
    try:
        other_process = subprocess.run(
            python(OPENER, str(path)), capture_output=True, text=True, env=child_env(), check=True
        )
        assert other_process.stdout.startswith("DataDirLockedError")
        assert f"pid {os.getpid()}" in other_process.stdout

        same_process = SQLiteStorage(path)
        with pytest.raises(DataDirLockedError, match="in use by another apiforge process"):
            await same_process.start()
        await same_process.close()
    finally:
        await owner.close()

    after_close = subprocess.run(
        python(OPENER, str(path)), capture_output=True, text=True, env=child_env(), check=True
    )
    assert after_close.stdout.strip() == "opened"
