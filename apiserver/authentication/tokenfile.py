"""The static token file (kube-apiserver's ``--token-auth-file``, k8s.io/apiserver
pkg/authentication/token/tokenfile): a CSV of ``token,user,uid[,"group1,group2"]``, read once at start.

Tokens are looked up in constant time: by a SHA-256 digest of the token (so the dict's probe leaks nothing
about the token a client sent), then compared with ``hmac.compare_digest``."""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import logging
from collections.abc import Sequence
from pathlib import Path

from apiserver.authentication.token import TokenResponse
from apiserver.authentication.user import UserInfo

log = logging.getLogger(__name__)


class TokenFileError(ValueError):
    """The token file cannot be used; the server refuses to start (kube's words)."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class TokenFileAuthenticator:
    """The users of a token file, by token."""

    def __init__(self, users: dict[str, UserInfo]) -> None:
        self._users = {_digest(token): (token.encode(), user) for token, user in users.items()}

    @classmethod
    def from_file(cls, path: Path) -> TokenFileAuthenticator:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TokenFileError(f"open {path}: {error}") from None
        return cls(parse_token_csv(text, str(path)))

    async def authenticate_token(
        self, token: str, audiences: Sequence[str]
    ) -> TokenResponse | None:
        found = self._users.get(_digest(token))
        if found is None or not hmac.compare_digest(found[0], token.encode()):
            return None
        return TokenResponse(found[1], stable=True)  # kube reads the file once, at start


def parse_token_csv(text: str, path: str) -> dict[str, UserInfo]:
    """Each record's user by token, as kube's tokenfile.NewCSV reads the file: at least three columns
    (else the whole file is refused), groups split on commas, a record with an empty token skipped and a
    duplicate token's later record winning (both with kube's warnings), blank lines ignored."""
    users: dict[str, UserInfo] = {}
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    record_number = 0
    try:
        for record in reader:
            if not record:
                continue
            if len(record) < 3:
                raise TokenFileError(
                    f"token file '{path}' must have at least 3 columns (token, user name, user uid),"
                    f" found {len(record)}"
                )
            record_number += 1
            token = record[0]
            if not token:
                log.warning(
                    "empty token has been found in token file '%s', record number '%d'",
                    path,
                    record_number,
                )
                continue
            if token in users:
                log.warning(
                    "duplicate token has been found in token file '%s', record number '%d'",
                    path,
                    record_number,
                )
            groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
            users[token] = UserInfo(record[1], record[2], groups)
    except csv.Error as error:
        # Go's encoding/csv words it "parse error on line N, ...": the line is what a user needs
        raise TokenFileError(f"parse error on line {reader.line_num}: {error}") from None
    return users
