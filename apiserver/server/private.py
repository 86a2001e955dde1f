"""Files written whole and private: keys, the kubeconfig. A reader never sees half a file, and no other user
can read one even for a moment, whatever the umask."""

from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it), created with ``mode``."""
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    os.chmod(
        temporary, mode
    )  # the umask may have narrowed it; a certificate is widened to 0644 here
    os.replace(temporary, path)
