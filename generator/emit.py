"""Stage 4 driver: bring the output directory to exactly the rendered files, writing each atomically and only
when it changed (the build cache that lets a run render less is ``cache``)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from generator.cache import MANIFEST


@dataclass(frozen=True)
class Difference:
    """One way the output directory differs from what generation produces."""

    path: str
    change: str  # "missing", "changed" or "stale"


def _existing_files(out_dir: Path) -> set[str]:
    if not out_dir.exists():
        return set()
    return {
        str(path.relative_to(out_dir))
        for path in out_dir.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.name != MANIFEST
    }


def differences(out_dir: Path, files: dict[str, str]) -> list[Difference]:
    found = []
    for path, text in sorted(files.items()):
        target = out_dir / path
        if not target.exists():
            found.append(Difference(path, "missing"))
        elif target.read_bytes() != text.encode():
            found.append(Difference(path, "changed"))
    found.extend(
        Difference(path, "stale") for path in sorted(_existing_files(out_dir) - set(files))
    )
    return found


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)  # mkstemp makes private files; generated code is ordinary source
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_manifest(out_dir: Path, data: bytes) -> None:
    _write_atomically(out_dir / MANIFEST, data)


def write_output(out_dir: Path, files: dict[str, str]) -> list[Difference]:
    """Bring ``out_dir`` to exactly ``files``: write what differs, remove stale files; report what changed."""
    changes = differences(out_dir, files)
    for change in changes:
        target = out_dir / change.path
        if change.change == "stale":
            target.unlink()
        else:
            _write_atomically(target, files[change.path].encode())
    for directory in sorted({p for p in out_dir.rglob("*") if p.is_dir()}, reverse=True):
        if directory.name != "__pycache__" and not any(directory.iterdir()):
            directory.rmdir()
    return changes
