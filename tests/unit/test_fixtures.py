"""The suite is self-contained: the data files it reads are vendored under tests/fixtures/, each one listed
with its checksum (SHA256SUMS) and its origin and licence (SOURCES.md), and no test module reaches for a
directory outside the repository."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from tests.serverproc import FIXTURES, REPO


def listed() -> dict[str, str]:
    """Path (relative to tests/fixtures) → SHA-256, as SHA256SUMS (``sha256sum`` output) gives them."""
    sums = {}
    for line in (FIXTURES / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        sums[name.removeprefix("./")] = digest
    return sums


def test_every_fixture_has_its_checksum_and_matches_it() -> None:
    """Every file of the directories SHA256SUMS covers (other topics carry a SOURCE.md of their own)."""
    sums = listed()
    covered = {name.split("/")[0] for name in sums}
    files = {
        path.relative_to(FIXTURES).as_posix(): path
        for top in covered
        for path in (FIXTURES / top).rglob("*")
        if path.is_file()
    }
    assert set(files) == set(sums)
    for name, path in files.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sums[name], name


def test_every_fixture_directory_is_in_the_sources() -> None:
    sources = (FIXTURES / "SOURCES.md").read_text()
    for top in sorted({name.split("/")[0] for name in listed()}):
        assert f"`{top}/" in sources, top


OUTSIDE = re.compile(
    r"""REPO\.parent\b|parents\[[4-9]\]|\.parent\.parent\.parent|/ ["']\.\.["']|/work/|\.\./shared"""
)
"""What a path to a directory beside or above the repository looks like in a test module."""


def test_no_test_module_reads_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path != Path(__file__)
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == []
