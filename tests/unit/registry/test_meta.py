"""Object metadata the server owns (``apiserver.registry.meta``)."""

from __future__ import annotations

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
