"""Where `make oracle` (``oracle/build.sh``) leaves the binaries: one directory per kube release under the
cache, outside the repository, so that only the first build pays."""

from __future__ import annotations

import os
from pathlib import Path

KUBE_VERSION = "v1.34.4"
"""The release the goldens are recorded from; build.sh's default."""
BUILD_SCRIPT = Path(__file__).with_name("build.sh")


def cache_dir() -> Path:
    """``$APIFORGE_ORACLE_CACHE``, else ``~/.cache/apiforge-oracle`` (build.sh's rule)."""
    configured = os.environ.get("APIFORGE_ORACLE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "apiforge-oracle"


def binary(name: str, version: str = KUBE_VERSION) -> Path:
    """The built ``name`` (kube-apiserver, kube-controller-manager); FileNotFoundError says to build."""
    path = cache_dir() / "bin" / version / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `make oracle` first")
    return path
