"""RequestInfo as kube's RequestInfoFactory gives it: the cases of k8s.io/apiserver
pkg/endpoints/request/requestinfo_test.go (TestGetAPIRequestInfo, TestGetNonAPIRequestInfo,
TestSelectorParsing), and the agreement of RequestInfo with the ResourcePath the handler serves."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from apiserver.endpoints.routing import RequestInfo, parse_resource_path, request_info


def info(method: str, url: str) -> RequestInfo:
    parts = urlsplit(url)
    return request_info(method, parts.path, parts.query.encode())


# method, url, verb, prefix, group, version, namespace, resource, subresource, name
API_CASES = [
    ("GET", "/api/v1/namespaces", "list", "api", "", "v1", "", "namespaces", "", ""),
    ("GET", "/api/v1/namespaces/other", "get", "api", "", "v1", "other", "namespaces", "", "other"),
    ("GET", "/api/v1/namespaces/other/pods", "list", "api", "", "v1", "other", "pods", "", ""),
    ("GET", "/api/v1/namespaces/other/pods/foo", "get", "api", "", "v1", "other", "pods", "", "foo"),
    ("HEAD", "/api/v1/namespaces/other/pods/foo", "get", "api", "", "v1", "other", "pods", "", "foo"),
    ("GET", "/api/v1/pods", "list", "api", "", "v1", "", "pods", "", ""),
    ("HEAD", "/api/v1/pods", "list", "api", "", "v1", "", "pods", "", ""),
    # special verbs
    ("GET", "/api/v1/proxy/namespaces/other/pods/foo", "proxy", "api", "", "v1", "other", "pods", "", "foo"),
    (
        "GET",
        "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource",
        "proxy",
        "api",
        "",
        "v1",
        "other",
        "pods",
        "",
        "foo",
    ),
    ("GET", "/api/v1/watch/pods", "watch", "api", "", "v1", "", "pods", "", ""),
    ("GET", "/api/v1/pods?watch=true", "watch", "api", "", "v1", "", "pods", "", ""),
    ("GET", "/api/v1/pods?watch=false", "list", "api", "", "v1", "", "pods", "", ""),
    ("GET", "/api/v1/watch/namespaces/other/pods", "watch", "api", "", "v1", "other", "pods", "", ""),
    ("GET", "/api/v1/namespaces/other/pods?watch=1", "watch", "api", "", "v1", "other", "pods", "", ""),
    ("GET", "/api/v1/namespaces/other/pods?watch=0", "list", "api", "", "v1", "other", "pods", "", ""),
    # subresources
    ("GET", "/api/v1/namespaces/other/pods/foo/status", "get", "api", "", "v1", "other", "pods", "status", "foo"),
    ("GET", "/api/v1/namespaces/other/pods/foo/proxy/subpath", "get", "api", "", "v1", "other", "pods", "proxy", "foo"),
    ("PUT", "/api/v1/namespaces/other/finalize", "update", "api", "", "v1", "other", "namespaces", "finalize", "other"),
    ("PUT", "/api/v1/namespaces/other/status", "update", "api", "", "v1", "other", "namespaces", "status", "other"),
    # verbs
    ("PATCH", "/api/v1/namespaces/other/pods/foo", "patch", "api", "", "v1", "other", "pods", "", "foo"),
    ("DELETE", "/api/v1/namespaces/other/pods/foo", "delete", "api", "", "v1", "other", "pods", "", "foo"),
    ("POST", "/api/v1/namespaces/other/pods", "create", "api", "", "v1", "other", "pods", "", ""),
    ("DELETE", "/api/v1/nodes", "deletecollection", "api", "", "v1", "", "nodes", "", ""),
    ("DELETE", "/api/v1/namespaces", "deletecollection", "api", "", "v1", "", "namespaces", "", ""),
    ("DELETE", "/api/v1/namespaces/other/pods", "deletecollection", "api", "", "v1", "other", "pods", "", ""),
    # groups and versions
    ("DELETE", "/apis/extensions/v1/namespaces/other/pods", "deletecollection", "apis", "extensions", "v1", "other", "pods", "", ""),
    ("POST", "/apis/extensions/v1/namespaces/other/pods", "create", "apis", "extensions", "v1", "other", "pods", "", ""),
    ("POST", "/apis/extensions/v1beta3/namespaces/other/pods", "create", "apis", "extensions", "v1beta3", "other", "pods", "", ""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "url", "verb", "prefix", "group", "version", "namespace", "resource", "sub", "name"),
    API_CASES,
)
def test_resource_requests_as_kube_reads_them(
    method: str,
    url: str,
    verb: str,
    prefix: str,
    group: str,
    version: str,
    namespace: str,
    resource: str,
    sub: str,
    name: str,
) -> None:
    path = urlsplit(url).path
    assert info(method, url) == RequestInfo(
        path, verb, True, prefix, group, version, namespace, resource, sub, name
    )


@pytest.mark.parametrize(
    ("url", "resource_request"),
    [
        ("/api/version/resource", True),
        ("/apis/group/version/resource/name/subresource", True),
        ("/api/version/resource/name/subresource", True),
        ("/apis/batch/v1/job", True),
        ("/apis/batch/v1/job/foo", True),
        ("/apis/batch/v1/job/foo/scale", True),
        ("/not-api/version/resource", False),
        ("/apis/extensions/v1beta1", False),
        ("/apis/extensions/v1beta1/", False),
        ("/api/version", False),
        ("/api", False),
        ("/", False),
        ("", False),
        ("/api/version/", False),
        ("/apis/group/version/", False),
        ("/badprefix/version/resource", False),
        ("/apis/version/resource", False),
    ],
)
def test_which_requests_are_resource_requests(url: str, resource_request: bool) -> None:
    assert info("GET", url).is_resource_request is resource_request


def test_a_non_resource_request_has_the_lowercase_method_as_verb() -> None:
    assert info("POST", "/healthz") == RequestInfo("/healthz", "post")
    assert info("OPTIONS", "/api/v1/pods").verb == ""


@pytest.mark.parametrize(
    ("method", "url", "verb", "name"),
    [
        ("GET", "/apis/group/version/resource", "list", ""),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1", "list", "name1"),
        ("GET", "/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1", "watch", "name1"),
        ("GET", "/apis/group/version/resource?fieldSelector=foo=bar&labelSelector=baz=qux", "list", ""),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo", "list", ""),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true", "watch", ""),
        ("DELETE", "/apis/group/version/resource?fieldSelector=metadata.name=foo", "deletecollection", ""),
        ("GET", "/apis/group/version/resource/name?fieldSelector=metadata.name=other", "get", "name"),
        ("GET", "/apis/group/version/watch/resource/name?fieldSelector=metadata.name=foo", "watch", "name"),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name!=name1", "list", ""),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name==a%2Fb", "list", ""),
    ],
)  # fmt: skip
def test_a_field_selector_on_the_name_names_the_object(
    method: str, url: str, verb: str, name: str
) -> None:
    found = info(method, url)
    assert (found.verb, found.name) == (verb, name)


def test_a_repeated_parameter_is_read_as_the_handler_reads_it() -> None:
    # kube's request info takes the first value; here the last wins, as in Request.query: what is
    # authorized must be what is served
    url = "/apis/g/v/r?fieldSelector=metadata.name=foo&fieldSelector=metadata.name=bar&watch=0&watch=1"
    found = info("GET", url)
    assert (found.verb, found.name) == ("watch", "bar")


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces",
        "/api/v1/namespaces/other",
        "/api/v1/namespaces/other/status",
        "/api/v1/namespaces/other/finalize",
        "/api/v1/namespaces/other/configmaps/cm",
        "/apis/stable.example.com/v1/namespaces/ns/crontabs/c/scale",
        "/apis/stable.example.com/v1/crontabs",
        "//api//v1/namespaces/other/configmaps/cm/",
    ],
)
def test_request_info_and_resource_path_agree(path: str) -> None:
    """One split serves both: the handler serves the resource, name and subresource that were authorized."""
    served = parse_resource_path(path)
    authorized = request_info("GET", path, b"")
    assert served is not None
    assert (served.group, served.version, served.plural, served.name, served.subresource) == (
        authorized.api_group,
        authorized.api_version,
        authorized.resource,
        authorized.name,
        authorized.subresource,
    )
    if served.namespace is not None:
        assert served.namespace == authorized.namespace
