"""The static token file (kube-apiserver's ``--token-auth-file``, k8s.io/apiserver
pkg/authentication/token/tokenfile): a CSV of ``token,user,uid[,"group1,group2"]``, read once at start.

Tokens are looked up in constant time (tokentable.py). The file is not read again, so its answers hold for
the server's lifetime: they are marked ``stable``, and the bearer-token authenticator keeps them."""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Sequence
from pathlib import Path

from apiserver.authentication.token import TokenResponse
from apiserver.authentication.tokentable import TokenTable
from apiserver.authentication.user import UserInfo

log = logging.getLogger(__name__)


class TokenFileError(ValueError):
    """The token file cannot be used; the server refuses to start (kube's words)."""


class TokenFileAuthenticator:
    """The users of a token file, by token."""

    def __init__(self, users: dict[str, UserInfo]) -> None:
        self._users: TokenTable[UserInfo] = TokenTable()
        for token, user in users.items():
            self._users.put(token, user)

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
        user = self._users.get(token)
        # kube reads the file once, at start: its verdicts stand while the server runs
        return None if user is None else TokenResponse(user, stable=True)


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
