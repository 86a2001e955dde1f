"""The PKI bootstrap: what the first start creates in the data directory (a CA for 10 years,
a serving certificate for a year naming every address the server is reached at, an admin client certificate
as k3s's), private keys whatever the umask, reuse on restart, and renewal on start near expiry, after a new
CA, for new names, or from files that no longer load."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import stat
from pathlib import Path
from typing import NamedTuple

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from apiserver.server.kubeconfig import Credentials, write_kubeconfig
from apiserver.server.pki import PKI, bootstrap, serving_names

NOW = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


def sans(certificate: x509.Certificate) -> tuple[set[str], set[str]]:
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(names.get_values_for_type(x509.DNSName)), {
        str(ip) for ip in names.get_values_for_type(x509.IPAddress)
    }


class Issued(NamedTuple):
    ca: x509.Certificate
    admin: x509.Certificate
    serving: x509.Certificate | None


def issued(pki: PKI) -> Issued:
    """The certificates of ``pki``, which compare (keys do not)."""
    return Issued(
        pki.ca.certificate, pki.admin.certificate, pki.serving and pki.serving.certificate
    )


def start(data: Path, now: datetime.datetime = NOW, *extra: str, bind: str = "10.1.2.3") -> PKI:
    return bootstrap(data, serving_names(bind, extra), now)


def test_first_start_creates_the_ca_the_serving_and_the_admin_certificates(tmp_path: Path) -> None:
    pki = start(tmp_path, NOW, "api.example.com", "192.0.2.7")
    assert pki.serving is not None
    ca, serving, admin = pki.ca.certificate, pki.serving.certificate, pki.admin.certificate
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.not_valid_after_utc - NOW == 3650 * DAY
    for leaf in (serving, admin):
        leaf.verify_directly_issued_by(ca)
        assert leaf.not_valid_after_utc - NOW == 365 * DAY
        assert leaf.not_valid_before_utc <= NOW  # backdated for clocks a little behind
    dns, ips = sans(serving)
    assert dns == {"localhost", socket.gethostname().lower(), "api.example.com"}
    assert ips == {"10.1.2.3", "127.0.0.1", "::1", "192.0.2.7"}
    usages = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]
    # k3s's admin: CN system:admin in system:masters, for client authentication only
    assert admin.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:admin"
    assert admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == (
        "system:masters"
    )
    usages = admin.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    names = sorted(path.name for path in (tmp_path / "pki").iterdir())
    assert names == [
        "admin.crt",
        "admin.key",
        "apiserver.crt",
        "apiserver.key",
        "ca.crt",
        "ca.key",
        "front-proxy-ca.crt",
        "front-proxy-ca.key",
        "front-proxy-client.crt",
        "front-proxy-client.key",
    ]
    # kubeadm's front proxy: its own CA, apart from the users' one, and CN=front-proxy-client
    proxy = pki.front_proxy_client.certificate
    proxy.verify_directly_issued_by(pki.front_proxy_ca.certificate)
    assert proxy.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == (
        "front-proxy-client"
    )
    assert pki.front_proxy_ca.certificate.subject != ca.subject


def test_a_wildcard_bind_address_is_no_name_and_a_zone_is_dropped() -> None:
    names = serving_names("0.0.0.0")
    assert ipaddress.ip_address("0.0.0.0") not in names.ips
    assert ipaddress.ip_address("fe80::1") in serving_names("fe80::1%eth0").ips


@pytest.mark.usefixtures("open_umask")
def test_keys_and_the_kubeconfig_are_private_whatever_the_umask(tmp_path: Path) -> None:
    pki = start(tmp_path)
    mode = lambda path: stat.S_IMODE(path.stat().st_mode)  # noqa: E731
    assert mode(tmp_path / "pki") == 0o700
    for name in ("ca", "apiserver", "admin"):
        assert mode(tmp_path / "pki" / f"{name}.key") == 0o600
        assert mode(tmp_path / "pki" / f"{name}.crt") == 0o644
    credentials = Credentials(
        pki.ca.certificate_pem(), pki.admin.certificate_pem(), pki.admin.key_pem()
    )
    write_kubeconfig(tmp_path / "admin.kubeconfig", "https://127.0.0.1:6443", credentials)
    assert mode(tmp_path / "admin.kubeconfig") == 0o600


def test_a_restart_reuses_everything(tmp_path: Path) -> None:
    first = start(tmp_path)
    files = {path.name: path.read_bytes() for path in (tmp_path / "pki").iterdir()}
    again = start(tmp_path, NOW + 100 * DAY)
    assert issued(again) == issued(first)
    assert {path.name: path.read_bytes() for path in (tmp_path / "pki").iterdir()} == files


def test_leaves_within_30_days_of_expiry_are_renewed_by_the_same_ca(tmp_path: Path) -> None:
    first = start(tmp_path)
    assert first.serving is not None
    kept = start(tmp_path, NOW + 334 * DAY)  # 31 days left
    assert issued(kept).serving == issued(first).serving
    renewed = start(tmp_path, NOW + 336 * DAY)  # 29 days left
    assert issued(renewed).ca == issued(first).ca
    assert renewed.serving is not None and issued(renewed).serving != issued(first).serving
    assert issued(renewed).admin != issued(first).admin
    assert renewed.serving.certificate.not_valid_after_utc == NOW + 336 * DAY + 365 * DAY


def test_a_ca_near_its_expiry_is_renewed_and_everything_it_signed_with_it(tmp_path: Path) -> None:
    first = start(tmp_path)
    later = NOW + 3630 * DAY
    renewed = start(tmp_path, later)
    assert issued(renewed).ca != issued(first).ca and renewed.serving is not None
    renewed.serving.certificate.verify_directly_issued_by(renewed.ca.certificate)
    renewed.admin.certificate.verify_directly_issued_by(renewed.ca.certificate)


def test_a_new_name_renews_the_serving_certificate_only(tmp_path: Path) -> None:
    first = start(tmp_path)
    again = start(tmp_path, NOW, "new.example.com")
    assert issued(again).ca == issued(first).ca and issued(again).admin == issued(first).admin
    assert again.serving is not None and issued(again).serving != issued(first).serving
    assert "new.example.com" in sans(again.serving.certificate)[0]
    moved = start(tmp_path, NOW, "new.example.com", bind="10.9.9.9")
    assert moved.serving is not None
    assert "10.9.9.9" in sans(moved.serving.certificate)[1]


def test_files_that_no_longer_load_are_made_again(tmp_path: Path) -> None:
    first = start(tmp_path)
    (tmp_path / "pki" / "admin.key").write_text("garbage")
    (tmp_path / "pki" / "apiserver.crt").unlink()
    again = start(tmp_path)
    assert issued(again).ca == issued(first).ca
    assert (
        issued(again).admin != issued(first).admin
        and issued(again).serving != issued(first).serving
    )


def test_with_a_serving_certificate_of_ones_own_none_is_made(tmp_path: Path) -> None:
    pki = bootstrap(tmp_path, None, NOW)
    assert pki.serving is None
    assert not (tmp_path / "pki" / "apiserver.crt").exists()
