"""Files holding secrets are their owner's only, whatever the umask (the data directory was 0755
and the database 0644, so every local user could read stored Secrets)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from apiserver.server.cli import prepare_data_dir
from apiserver.server.kubeconfig import write_kubeconfig
from apiserver.storage.sqlite import SQLiteStorage


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_the_data_directory_and_everything_in_it_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o777)
    prepare_data_dir(data)
    assert mode(data) == 0o700
    write_kubeconfig(data / "admin.kubeconfig", "http://127.0.0.1:1")
    assert mode(data / "admin.kubeconfig") == 0o600

    async def write_a_secret() -> None:
        storage = SQLiteStorage(data / "state.db")
        await storage.start()
        try:
            await storage.create("/registry/secrets/default/s", b'{"data": {"k": "djE="}}')
        finally:
            await storage.close()

    asyncio.run(write_a_secret())
    files = sorted(path.name for path in data.iterdir())
    assert "state.db" in files
    assert {name: mode(data / name) for name in files} == {name: 0o600 for name in files}
