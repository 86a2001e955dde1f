"""OpenAPI serving, in process: the /openapi/v3 index, each group-version document by its hash URL with ETag,
Cache-Control and 304, and /openapi/v2 as JSON or gnostic protobuf (API-CONVENTIONS.md §4). The caching rules
are kube-openapi's (k8s.io/kube-openapi pkg/handler3 HandleGroupVersion): an ETag that is the quoted hash of
the index URL, ``public, immutable`` only for a request that names the current hash."""

from __future__ import annotations

import json

import httpx
import pytest

from generated.server import OPENAPI_DIR
from tests.serverproc import FIXTURES

GV = "apis/stable.example.com/v1"
KUBE_CORE = FIXTURES / "kubernetes" / "openapi-v3" / "api__v1_openapi.json"


def index(api: httpx.Client) -> dict[str, str]:
    return {
        path: entry["serverRelativeURL"]
        for path, entry in api.get("/openapi/v3").json()["paths"].items()
    }


def test_the_index_lists_every_generated_document_by_hash(api: httpx.Client) -> None:
    served = index(api)
    generated = {
        file.stem.replace("__", "/")
        for file in OPENAPI_DIR.glob("*.json")
        if file.stem not in ("aggregate", "swagger")
    }
    assert set(served) == generated
    assert {"api/v1", GV, "apis/stable.example.com/v1beta1"} <= set(served)
    for path, url in served.items():
        assert url.startswith(f"/openapi/v3/{path}?hash=")


def test_each_document_is_the_generated_one(api: httpx.Client) -> None:
    for path, url in index(api).items():
        body = api.get(url).json()
        assert body == json.loads((OPENAPI_DIR / f"{path.replace('/', '__')}.json").read_text())
        assert body["openapi"].startswith("3.")


def test_the_hash_is_the_etag_and_a_hashed_url_is_immutable(api: httpx.Client) -> None:
    url = index(api)[GV]
    response = api.get(url)
    assert response.status_code == 200
    assert response.headers["etag"] == f'"{url.rpartition("hash=")[2]}"'
    assert response.headers["cache-control"] == "public, immutable"
    # without the hash the document may change under the same URL: kube's default no-cache applies
    plain = api.get(f"/openapi/v3/{GV}")
    assert plain.content == response.content
    assert plain.headers["cache-control"] == "no-cache, private"


def test_a_matching_if_none_match_is_304_without_a_body(api: httpx.Client) -> None:
    url = index(api)[GV]
    etag = api.get(url).headers["etag"]
    revalidated = api.get(url, headers={"if-none-match": etag})
    assert revalidated.status_code == 304 and revalidated.content == b""
    assert revalidated.headers["etag"] == etag
    assert api.get(url, headers={"if-none-match": '"stale"'}).status_code == 200


def test_documents_of_different_group_versions_differ_in_hash(api: httpx.Client) -> None:
    hashes = [url.rpartition("hash=")[2] for url in index(api).values()]
    assert len(set(hashes)) == len(hashes)


def test_a_stale_hash_is_redirected_to_the_current_one(api: httpx.Client) -> None:
    """kube-openapi's handler3 (HandleGroupVersion): a hash that is not the current one gets a 301 to the
    current hashed URL, which kubectl's HTTP cache then keeps."""
    url = index(api)[GV]
    response = api.get(f"/openapi/v3/{GV}?hash=0123", follow_redirects=False)
    assert response.status_code == 301
    assert response.headers["location"] == url


@pytest.mark.parametrize("path", ["/openapi/v3/apis/nosuch.example.com/v1", "/openapi/v3/apis"])
def test_an_unknown_document_is_404(api: httpx.Client, path: str) -> None:
    assert api.get(path).status_code == 404


def test_core_kinds_are_described_as_kube_describes_them(api: httpx.Client) -> None:
    """The built-in kinds' schemas carry kube's property names and GVK, and their patch operation accepts
    the patch types kube's does (strategic merge included), with the fieldValidation parameter kubectl
    looks for before validating on the server (§4.1)."""
    kube = json.loads(KUBE_CORE.read_text())
    ours = api.get(index(api)["api/v1"]).json()
    for kind in ("ConfigMap", "Secret", "Namespace", "Service", "Event"):
        name = f"io.k8s.api.core.v1.{kind}"
        ours_schema, kube_schema = (
            ours["components"]["schemas"][name],
            kube["components"]["schemas"][name],
        )
        assert set(ours_schema["properties"]) == set(kube_schema["properties"])
        gvk = "x-kubernetes-group-version-kind"
        assert ours_schema[gvk] == kube_schema[gvk]
    path = "/api/v1/namespaces/{namespace}/configmaps/{name}"
    ours_patch, kube_patch = ours["paths"][path]["patch"], kube["paths"][path]["patch"]
    # apply-patch+cbor arrived in kube 1.35, after the versions apiforge speaks for
    kube_types = set(kube_patch["requestBody"]["content"]) - {"application/apply-patch+cbor"}
    assert set(ours_patch["requestBody"]["content"]) == kube_types
    assert {p["name"] for p in ours_patch["parameters"]} == {
        "dryRun",
        "fieldManager",
        "fieldValidation",
        "force",
    }


def test_custom_resource_documents_carry_what_kubectl_reads(api: httpx.Client) -> None:
    document = api.get(index(api)[GV]).json()
    crontab = document["components"]["schemas"]["com.example.stable.v1.CronTab"]
    gvk = {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    assert crontab["x-kubernetes-group-version-kind"] == [gvk]
    patch = document["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"][
        "patch"
    ]
    assert patch["x-kubernetes-group-version-kind"] == gvk
    assert any(p["name"] == "fieldValidation" and p["in"] == "query" for p in patch["parameters"])
    # a compact-format kind is compiled like a built-in type: it takes strategic merge patch
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]


def test_v2_is_gnostic_protobuf_for_kubectl_and_json_otherwise(api: httpx.Client) -> None:
    """kubectl 1.27/1.28 ask for v2 as protobuf only, and validate against it (§4.2)."""
    protobuf = api.get(
        "/openapi/v2",
        headers={"accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
    )
    assert protobuf.status_code == 200
    assert "protobuf" in protobuf.headers["content-type"]
    assert protobuf.content[:1] != b"{"
    as_json = api.get("/openapi/v2", headers={"accept": "application/json"})
    assert as_json.headers["content-type"] == "application/json"
    swagger = as_json.json()
    assert swagger["swagger"] == "2.0"
    assert swagger["definitions"]["com.example.stable.v1.CronTab"][
        "x-kubernetes-group-version-kind"
    ]
    for response in (protobuf, as_json):  # each representation has its own validator
        assert response.headers["etag"].startswith('"')
        assert (
            api.get("/openapi/v2", headers={"accept": response.request.headers["accept"]}).headers[
                "etag"
            ]
            == response.headers["etag"]
        )
    assert protobuf.headers["etag"] != as_json.headers["etag"]
