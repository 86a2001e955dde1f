"""The static token file (kube's --token-auth-file, k8s.io/apiserver pkg/authentication/token/tokenfile):
read as kube's NewCSV reads it, its tokens compared in constant time."""

from __future__ import annotations

import asyncio
import hmac
import logging
from pathlib import Path

import pytest

from apiserver.authentication import tokentable
from apiserver.authentication.tokenfile import (
    TokenFileAuthenticator,
    TokenFileError,
    parse_token_csv,
)
from apiserver.authentication.user import UserInfo


def test_records_give_users_with_their_uids_and_groups() -> None:
    text = 'token1,alice,uid-a,"devs,ops"\ntoken2,bob,uid-b\n\n"tok,3",carol,uid-c,solo\r\n'
    assert parse_token_csv(text, "f.csv") == {
        "token1": UserInfo("alice", "uid-a", ("devs", "ops")),
        "token2": UserInfo("bob", "uid-b"),
        "tok,3": UserInfo("carol", "uid-c", ("solo",)),
    }


def test_a_record_of_fewer_than_three_columns_refuses_the_whole_file() -> None:
    # kube: "token file '%s' must have at least 3 columns (token, user name, user uid), found %d"
    with pytest.raises(TokenFileError) as refused:
        parse_token_csv("good,alice,1\nshort,bob\n", "/etc/tokens.csv")
    assert str(refused.value) == (
        "token file '/etc/tokens.csv' must have at least 3 columns (token, user name, user uid),"
        " found 2"
    )


def test_a_malformed_quote_is_a_parse_error_naming_its_line() -> None:
    with pytest.raises(TokenFileError, match=r"^parse error on line 2: "):
        parse_token_csv('a,b,c\n"unterminated,b,c\n', "f.csv")


def test_empty_tokens_are_skipped_and_a_duplicate_wins_with_kubes_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        users = parse_token_csv(",nobody,0\nsame,first,1\nsame,second,2\n", "f.csv")
    assert users == {"same": UserInfo("second", "2")}
    assert [record.getMessage() for record in caplog.records] == [
        "empty token has been found in token file 'f.csv', record number '1'",
        "duplicate token has been found in token file 'f.csv', record number '3'",
    ]


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match=r"missing\.csv"):
        TokenFileAuthenticator.from_file(tmp_path / "missing.csv")


def authenticate(authenticator: TokenFileAuthenticator, token: str) -> UserInfo | None:
    response = asyncio.run(authenticator.authenticate_token(token, ()))
    return None if response is None else response.user


def test_only_the_exact_token_authenticates(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("s3cret-token,alice,uid-a,devs\n")
    authenticator = TokenFileAuthenticator.from_file(path)
    assert authenticate(authenticator, "s3cret-token") == UserInfo("alice", "uid-a", ("devs",))
    for near in ("s3cret-toke", "s3cret-token ", "S3CRET-TOKEN", "", "s3cret-token\x00"):
        assert authenticate(authenticator, near) is None


def test_the_lookup_compares_the_token_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dict is keyed by a digest (its probe compares digests, not the token) and the token itself is
    compared with hmac.compare_digest, whose time does not depend on where the bytes differ."""
    compared: list[tuple[bytes, bytes]] = []
    compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(tokentable.hmac, "compare_digest", spy)
    authenticator = TokenFileAuthenticator({"t0ken": UserInfo("alice")})
    assert authenticate(authenticator, "t0ken") == UserInfo("alice")
    assert compared == [(b"t0ken", b"t0ken")]
    assert authenticate(authenticator, "other") is None  # another digest: nothing to compare
    assert len(compared) == 1
    assert all(len(key) == 32 for key in authenticator._users._entries)  # SHA-256 digests
