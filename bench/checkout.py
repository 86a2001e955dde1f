"""A git ref beside the work tree, with a virtualenv of its own, for comparing two servers side by side.

``python -m bench compare REF`` needs the server as it was at REF and installed as REF declared it, so that
neither side runs on the other's code or packages: a detached git worktree under the user's cache directory,
keyed by the commit, with a ``.venv`` in it. Only the first comparison against a commit pays for the checkout
and the install; the next ones reuse both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import REPO

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "apiforge-bench"
INSTALLED = ".bench-installed"
"""Written in the checkout's venv once its install succeeded: a venv without it is made again."""


@dataclass(frozen=True)
class Checkout:
    """One side of a comparison: where its code is and the Python that runs it."""

    label: str
    root: Path
    python: Path


def work_tree() -> Checkout:
    """This work tree as it is, uncommitted changes included, on the Python running the bench."""
    return Checkout("work tree", REPO, Path(sys.executable))


def checkout(ref: str) -> Checkout:
    """REF (a branch, tag or commit) checked out and installed, made once per commit."""
    commit = _git("rev-parse", "--verify", f"{ref}^{{commit}}")
    root = CACHE / commit[:12]
    if not (root / ".git").exists():
        print(f"checking out {ref} ({commit[:12]}) in {root}", flush=True)
        _git("worktree", "prune")  # a registration whose folder was removed would refuse the add
        _git("worktree", "add", "--detach", str(root), commit)
    venv = root / ".venv"
    if not (venv / INSTALLED).exists():
        print(f"installing {ref} into {venv} (once per commit)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", "-e", str(root)], check=True
        )
        (venv / INSTALLED).touch()
    return Checkout(f"{ref} ({commit[:8]})", root, venv / "bin" / "python")


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True)
    return result.stdout.strip()
