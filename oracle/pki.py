"""The oracle's PKI, shaped like apiforge's (``apiserver/server/pki.py`` makes it: kubeadm's file names, a CA, a
serving certificate for the loopback, an admin client certificate in ``system:masters``, the front-proxy pair),
plus what kube-apiserver needs named on its command line: the service-account key pair and a static token file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from apiserver.authentication.jwtkeys import SIGNING_KEY_FILE, ensure_signing_key
from apiserver.server.kubeconfig import Credentials, write_kubeconfig
from apiserver.server.pki import PKI, bootstrap, serving_names
from apiserver.server.private import write_private

TOKEN_FILE = "tokens.csv"
ADMIN_TOKEN = "oracle-admin-token"
"""A static token of a second admin (kube's token file: token,user,uid,"group1,group2")."""


@dataclass(frozen=True, slots=True)
class OraclePKI:
    pki: PKI
    service_account_key: Path
    """kube reads the public half from the private key's file too (--service-account-key-file)."""
    token_file: Path

    def write_kubeconfig(self, path: Path, server_url: str) -> None:
        credentials = Credentials(
            self.pki.ca.certificate_pem(),
            self.pki.admin.certificate_pem(),
            self.pki.admin.key_pem(),
        )
        write_kubeconfig(path, server_url, credentials)


def make_pki(directory: Path) -> OraclePKI:
    """Create (or reuse) every file under ``directory``/pki."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = bootstrap(directory, serving_names("127.0.0.1"))
    private = pki.directory / SIGNING_KEY_FILE
    ensure_signing_key(private)
    tokens = pki.directory / TOKEN_FILE
    write_private(
        tokens, f'{ADMIN_TOKEN},oracle-admin,oracle-admin-uid,"system:masters"\n'.encode()
    )
    return OraclePKI(pki, private, tokens)
