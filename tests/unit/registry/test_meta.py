"""Object metadata the server owns (``apiserver.registry.meta``)."""

from __future__ import annotations

import os
import uuid

from apiserver.registry.meta import new_uid


def test_a_new_uid_is_a_random_rfc_4122_uuid_in_canonical_text_form() -> None:
    uids = [new_uid() for _ in range(2_000)]
    assert len(set(uids)) == len(uids)
    for text in uids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text  # lowercase, 8-4-4-4-12
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
    # every variant digit (8, 9, a, b) and every random digit shows up: the bits are not fixed
    assert {text[19] for text in uids} == set("89ab")
    assert {text[15] for text in uids} == set("0123456789abcdef")


def test_a_forked_process_draws_its_own_uids_not_its_parents_pooled_ones() -> None:
    """The uids come from a pool of random bytes read ahead: a worker forked with a filled pool would
    otherwise hand out the very uids its parent hands out next (``serve --workers``)."""
    new_uid()  # the pool is filled now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's own process
        os.write(write, "".join(new_uid() for _ in range(8)).encode())
        os._exit(0)
    os.close(write)
    _, status = os.waitpid(child, 0)
    with os.fdopen(read, "rb") as pipe:
        theirs = pipe.read().decode()
    assert status == 0
    mine = "".join(new_uid() for _ in range(8))
    assert len(theirs) == len(mine) == 8 * 36
    assert theirs != mine
