"""The extension-apiserver-authentication ConfigMap's data in kube's keys (kube-apiserver's
ClusterAuthenticationInfo controller writes them, k8s.io/apiserver's DelegatingAuthenticationOptions reads
them): PEM bundles and JSON lists, read back into the same configuration; data that makes no sense is an
error that names the ConfigMap, not a crash."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from apiserver.authentication.requestheader import RequestHeaderConfig
from apiserver.machinery.scheme import Scheme
from apiserver.server.authentication_info import (
    AuthenticationInfoError,
    config_maps,
    parse,
    published,
)
from apiserver.server.delegation_options import DelegationOptions
from apiserver.server.pki import bootstrap
from generated.server import build_scheme
from tests import certs

CLIENT_CA = certs.ca("client-ca")
PROXY_CA = certs.ca("front-proxy-ca")


def test_the_data_has_kubes_keys_and_reads_back_the_same() -> None:
    config = RequestHeaderConfig(
        (PROXY_CA.certificate,),
        ("front-proxy-client",),
        ("X-Remote-User",),
        ("X-Remote-Group",),
        ("X-Remote-Extra-",),
        ("X-Remote-Uid",),
    )
    data = published([CLIENT_CA.certificate], config)
    assert sorted(data) == [
        "client-ca-file",
        "requestheader-allowed-names",
        "requestheader-client-ca-file",
        "requestheader-extra-headers-prefix",
        "requestheader-group-headers",
        "requestheader-uid-headers",
        "requestheader-username-headers",
    ]
    assert data["requestheader-allowed-names"] == '["front-proxy-client"]'
    assert data["client-ca-file"] == CLIENT_CA.certificate.public_bytes(Encoding.PEM).decode()
    assert parse(data) == ([CLIENT_CA.certificate], config)


def test_without_a_request_header_ca_only_the_client_ca_is_published_and_read() -> None:
    data = published([CLIENT_CA.certificate], None)
    assert list(data) == ["client-ca-file"]
    assert parse(data) == ([CLIENT_CA.certificate], None)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("requestheader-allowed-names", "front-proxy-client", "line 1 column 1"),
        ("requestheader-username-headers", '[1, "x"]', "not a JSON list of strings"),
        ("client-ca-file", "-----BEGIN CERTIFICATE-----\nnope\n", ""),
    ],
)
def test_nonsense_in_the_configmap_is_an_error_naming_it(
    key: str, value: str, message: str
) -> None:
    data = published([CLIENT_CA.certificate], RequestHeaderConfig((PROXY_CA.certificate,)))
    data[key] = value
    with pytest.raises(
        AuthenticationInfoError,
        match=f"kube-system/extension-apiserver-authentication: .*{message}",
    ):
        parse(data)


def test_a_front_without_requestheader_flags_publishes_kubeadms_front_proxy_setup(
    tmp_path: Path,
) -> None:
    """kubeadm: --requestheader-client-ca-file=front-proxy-ca.crt, allowed names front-proxy-client,
    X-Remote-* headers."""
    pki = bootstrap(tmp_path, None)
    config = DelegationOptions().published_request_header(pki)
    assert config is not None
    assert config.client_cas == (pki.front_proxy_ca.certificate,)
    assert config.allowed_names == ("front-proxy-client",)
    assert orjson.loads(published([], config)["requestheader-uid-headers"]) == ["X-Remote-Uid"]
    # a proxy certificate of the user's own: its CA is not known here
    assert DelegationOptions(proxy_client_cert_file="p.crt").published_request_header(pki) is None


def test_the_configmap_is_stored_as_the_schemes_core_v1_resource() -> None:
    """The runtime names the object's type (core/v1 ConfigMap) and takes where it is stored from the
    Scheme the generated code hands the server; a Scheme without it is a reason not to start."""
    resource = config_maps(build_scheme())
    assert (resource.group, resource.plural, resource.namespaced) == ("", "configmaps", True)
    with pytest.raises(AuthenticationInfoError, match="serves no v1 ConfigMap"):
        config_maps(Scheme())
