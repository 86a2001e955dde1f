"""Discovery, OpenAPI v3 serving, health and version, as API-CONVENTIONS.md §2 to §4 describe them."""

from __future__ import annotations

import httpx

from tests.integration.test_crud import CRONTABS, crontab


def test_version_and_health(client: httpx.Client) -> None:
    version = client.get("/version").json()
    assert {"major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion",
            "compiler", "platform"} <= set(version)  # fmt: skip
    assert client.get("/version/").json() == version  # kr8s asks with a trailing slash
    for path in ("/healthz", "/livez", "/readyz"):
        response = client.get(path)
        assert response.status_code == 200 and response.text == "ok"
        assert response.headers["content-type"].startswith("text/plain")


def test_legacy_discovery(client: httpx.Client) -> None:
    api = client.get("/api/").json()
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    groups = {g["name"]: g for g in client.get("/apis").json()["groups"]}
    assert groups["stable.example.com"]["preferredVersion"] == {
        "groupVersion": "stable.example.com/v1",
        "version": "v1",
    }
    assert [v["version"] for v in groups["stable.example.com"]["versions"]] == ["v1", "v1beta1"]
    assert "" not in groups
    resources = {
        r["name"]: r for r in client.get("/apis/stable.example.com/v1").json()["resources"]
    }
    assert resources["crontabs/status"]["verbs"] == ["get", "patch", "update"]
    assert (resources["crontabs/scale"]["group"], resources["crontabs/scale"]["kind"]) == (
        "autoscaling",
        "Scale",
    )
    core = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    assert core["namespaces"]["namespaced"] is False and core["configmaps"]["shortNames"] == ["cm"]
    assert client.get("/apis/stable.example.com").json()["kind"] == "APIGroup"
    assert client.get("/apis/stable.example.com/v9").status_code == 404


def test_openapi_v3_index_hashes_and_etags(client: httpx.Client) -> None:
    index = client.get("/openapi/v3").json()["paths"]
    assert set(index) >= {"api/v1", "apis/stable.example.com/v1", "apis/stable.example.com/v1beta1"}
    url = index["apis/stable.example.com/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/stable.example.com/v1?hash=")
    response = client.get(url)
    assert response.headers["cache-control"] == "public, immutable"
    etag = response.headers["etag"]
    assert client.get(url, headers={"if-none-match": etag}).status_code == 304
    document = response.json()
    crontab_schema = document["components"]["schemas"]["com.example.stable.v1.CronTab"]
    assert crontab_schema["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    ]
    patch = document["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"][
        "patch"
    ]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "stable.example.com",
        "kind": "CronTab",
        "version": "v1",
    }
    assert any(p["name"] == "fieldValidation" and p["in"] == "query" for p in patch["parameters"])
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    assert client.get("/openapi/v3/apis/nope/v1").status_code == 404


def test_table_output_from_printer_columns(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("tabled", replicas=3))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    response = client.get(f"{CRONTABS}/tabled", headers={"accept": accept})
    assert response.headers["content-type"] == "application/json;as=Table;v=v1;g=meta.k8s.io"
    table = response.json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Spec", "Replicas", "Image", "Age"]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert table["columnDefinitions"][3]["priority"] == 1
    row = table["rows"][0]
    assert row["cells"][:4] == ["tabled", "* * * * */5", 3, "my-awesome-cron-image"]
    assert row["cells"][4].endswith("s")  # a server-rendered age such as "0s"
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == "tabled"
    full = client.get(f"{CRONTABS}?includeObject=Object", headers={"accept": accept}).json()
    assert all(r["object"]["kind"] == "CronTab" for r in full["rows"])
    assert full["metadata"]["resourceVersion"].isdigit()


def test_aggregated_discovery_v2_and_v2beta1(client: httpx.Client) -> None:
    # kubectl 1.30+ offer v2 first, 1.27-1.29 only v2beta1 (API-CONVENTIONS.md §3.2)
    for version in ("v2", "v2beta1"):
        accept = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList,application/json"
        response = client.get("/apis", headers={"accept": accept})
        assert response.headers["content-type"] == (
            f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
        )
        document = response.json()
        assert document["kind"] == "APIGroupDiscoveryList"
        assert document["apiVersion"] == f"apidiscovery.k8s.io/{version}"
        groups = {item["metadata"]["name"]: item for item in document["items"]}
        stable = groups["stable.example.com"]
        assert [v["version"] for v in stable["versions"]] == ["v1", "v1beta1"]
        crontabs = next(
            r for r in stable["versions"][0]["resources"] if r["resource"] == "crontabs"
        )
        assert crontabs["scope"] == "Namespaced" and crontabs["shortNames"] == ["ct"]
        assert crontabs["responseKind"] == {"group": "", "version": "", "kind": "CronTab"}
        scale = next(s for s in crontabs["subresources"] if s["subresource"] == "scale")
        assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    core = client.get("/api", headers={"accept": accept}).json()
    assert [item["metadata"]["name"] for item in core["items"]] == [""]
    plain = client.get("/apis", headers={"accept": "application/json"})
    assert plain.json()["kind"] == "APIGroupList"


def test_partial_object_metadata(client: httpx.Client) -> None:
    client.post(CRONTABS, json=crontab("partial"))
    one = client.get(
        f"{CRONTABS}/partial",
        headers={"accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
    )
    assert (
        one.headers["content-type"]
        == "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
    )
    assert (
        one.json()["kind"] == "PartialObjectMetadata"
        and one.json()["metadata"]["name"] == "partial"
    )
    assert "spec" not in one.json()
    listed = client.get(
        CRONTABS,
        headers={
            "accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
        },
    ).json()
    assert (
        listed["kind"] == "PartialObjectMetadataList" and listed["apiVersion"] == "meta.k8s.io/v1"
    )
    assert all(item["kind"] == "PartialObjectMetadata" for item in listed["items"])
    assert listed["metadata"]["resourceVersion"].isdigit()
