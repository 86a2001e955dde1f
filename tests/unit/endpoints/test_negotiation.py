"""Response negotiation, in process: the object as JSON, a meta.k8s.io/v1 Table built from printer columns, and
PartialObjectMetadata(List), as the Accept header asks (API-CONVENTIONS.md §7). kube's rules are those of
k8s.io/apiserver pkg/endpoints/handlers/response.go (transformObject, asTable) and negotiation/errors.go."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import yaml

from tests.shipped import CLUSTERS, CONFIGMAPS, CRONTABS, assert_status, compute_cluster, crontab

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
# what `kubectl get` sends, for a list and for one object (§7)
KUBECTL_GET = f"{TABLE},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
PARTIAL = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"


@pytest.fixture(scope="module", autouse=True)
def objects(api: httpx.Client) -> None:
    """Two CronTabs, a cluster-scoped ComputeCluster and a ConfigMap to look at."""
    for name, replicas in (("tabled", 3), ("second", 1)):
        assert api.post(CRONTABS, json=crontab(name, replicas=replicas)).status_code == 201
    assert api.post(CLUSTERS, json=compute_cluster("eu-1", tier="gold")).status_code == 201
    configmap = {"metadata": {"name": "settings"}, "data": {"a": "1", "b": "2"}}
    assert api.post(CONFIGMAPS, json=configmap).status_code == 201


def get(api: httpx.Client, path: str, accept: str, **params: str) -> httpx.Response:
    response = api.get(path, headers={"accept": accept}, params=params)
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize(
    "accept", ["", "application/json", "*/*", "application/*", "application/json, */*"]
)
def test_json_is_the_object(api: httpx.Client, accept: str) -> None:
    response = get(api, f"{CRONTABS}/tabled", accept)
    assert response.headers["content-type"] == "application/json"
    assert response.json()["kind"] == "CronTab" and response.json()["spec"]["replicas"] == 3


def test_a_table_of_one_object_has_the_printer_columns(api: httpx.Client) -> None:
    response = get(api, f"{CRONTABS}/tabled", KUBECTL_GET)
    # kube names the serializer's media type, not the as=Table asked for
    assert response.headers["content-type"] == "application/json"
    table = response.json()
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    columns = table["columnDefinitions"]
    assert [c["name"] for c in columns] == ["Name", "Spec", "Replicas", "Image", "Age"]
    assert columns[0]["type"] == "string" and columns[0]["format"] == "name"
    assert [c["priority"] for c in columns] == [0, 0, 0, 1, 0]  # Image only with -o wide
    [row] = table["rows"]
    assert row["cells"][:4] == ["tabled", "* * * * */5", 3, "my-awesome-cron-image"]
    assert row["cells"][4].endswith("s")  # a server-rendered age such as "0s"


def test_a_table_of_a_list_has_a_row_per_object_and_the_list_metadata(api: httpx.Client) -> None:
    table = get(api, CRONTABS, KUBECTL_GET, limit="500").json()
    assert sorted(row["cells"][0] for row in table["rows"]) == ["second", "tabled"]
    listed = api.get(CRONTABS).json()
    # `kubectl get -w` starts watching at the Table's resourceVersion (§7)
    assert table["metadata"]["resourceVersion"] == listed["metadata"]["resourceVersion"]


def test_a_paged_table_carries_the_continue_token(api: httpx.Client) -> None:
    first = get(api, CRONTABS, TABLE, limit="1").json()
    assert len(first["rows"]) == 1 and first["metadata"]["continue"]
    rest = get(api, CRONTABS, TABLE, limit="1", **{"continue": first["metadata"]["continue"]})
    assert {first["rows"][0]["cells"][0], rest.json()["rows"][0]["cells"][0]} == {
        "second",
        "tabled",
    }


def test_rows_carry_partial_object_metadata_by_default(api: httpx.Client) -> None:
    """kubectl reads the namespace (-A) and labels (--show-labels) from the row's object (§7)."""
    [row] = get(api, CLUSTERS, TABLE).json()["rows"]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["apiVersion"] == "meta.k8s.io/v1"
    assert row["object"]["metadata"]["labels"] == {"tier": "gold"}
    assert "spec" not in row["object"]


@pytest.mark.parametrize(
    ("include", "kind"), [("Object", "ComputeCluster"), ("Metadata", "PartialObjectMetadata")]
)
def test_include_object_chooses_the_rows_object(api: httpx.Client, include: str, kind: str) -> None:
    [row] = get(api, CLUSTERS, TABLE, includeObject=include).json()["rows"]
    assert row["object"]["kind"] == kind


def test_a_v1beta1_table_is_written_in_v1beta1(api: httpx.Client) -> None:
    """kube's asTable sets the asked group-version on the Table and its rows' PartialObjectMetadata
    (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go)."""
    beta = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
    listed = get(api, CLUSTERS, beta).json()
    assert listed["apiVersion"] == "meta.k8s.io/v1beta1"
    assert [r["object"]["apiVersion"] for r in listed["rows"]] == ["meta.k8s.io/v1beta1"]
    one = get(api, f"{CLUSTERS}/{listed['rows'][0]['cells'][0]}", beta).json()
    assert (one["apiVersion"], one["rows"][0]["object"]["apiVersion"]) == (
        "meta.k8s.io/v1beta1",
        "meta.k8s.io/v1beta1",
    )
    assert get(api, CLUSTERS, TABLE).json()["apiVersion"] == "meta.k8s.io/v1"


def test_include_object_none_leaves_the_object_null(api: httpx.Client) -> None:
    """kube writes the row's empty RawExtension as ``"object": null`` (apimachinery runtime/extension.go)."""
    [row] = get(api, CLUSTERS, TABLE, includeObject="None").json()["rows"]
    assert "object" in row
    assert row["object"] is None


def test_an_unknown_include_object_is_400(api: httpx.Client) -> None:
    """kube's optionsForTransform with ValidateTableOptions (endpoints/handlers/response.go); outside a
    Table request the parameter means nothing and is ignored, as in kube."""
    response = api.get(CLUSTERS, headers={"accept": TABLE}, params={"includeObject": "Bogus"})
    status = assert_status(response, 400, "BadRequest")
    assert status["message"] == (
        'Unable to convert to Table as requested: includeObject: Invalid value: "Bogus": '
        "must be 'Metadata', 'Object', 'None', or empty"
    )
    assert api.get(CLUSTERS, params={"includeObject": "Bogus"}).status_code == 200


def test_a_cluster_scoped_table_has_its_columns_and_null_for_a_missing_value(
    api: httpx.Client,
) -> None:
    """kube's CRD table convertor leaves a cell empty (null) when its JSONPath finds nothing."""
    table = get(api, CLUSTERS, TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Region",
        "Nodes",
        "Phase",
        "Age",
        "Labels",
        "Max Pods",
    ]
    [row] = table["rows"]
    assert row["cells"][:4] == ["eu-1", "eu", 3, None]  # nodeCount defaulted to 3; no status yet


def test_each_version_prints_its_own_columns(api: httpx.Client) -> None:
    """A CRD's additionalPrinterColumns belong to a version: v1beta1 names its schedule column after its
    own field (spec.schedule, converted from the hub's spec.cronSpec)."""
    beta = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs/tabled"
    table = get(api, beta, TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Schedule",
        "Replicas",
        "Age",
    ]
    assert table["rows"][0]["cells"][:3] == ["tabled", "* * * * */5", 3]


def test_configmaps_print_as_kube_prints_them(api: httpx.Client) -> None:
    table = get(api, CONFIGMAPS, TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["settings", 2]


def test_partial_object_metadata_of_one_object(api: httpx.Client) -> None:
    response = get(api, f"{CRONTABS}/tabled", f"{PARTIAL},application/json")
    assert response.headers["content-type"] == "application/json"
    document = response.json()
    assert (document["kind"], document["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert document["metadata"]["name"] == "tabled" and "spec" not in document


def test_partial_object_metadata_list(api: httpx.Client) -> None:
    response = get(api, CRONTABS, f"{PARTIAL_LIST},application/json")
    assert response.headers["content-type"] == "application/json"
    document = response.json()
    assert (document["kind"], document["apiVersion"]) == (
        "PartialObjectMetadataList",
        "meta.k8s.io/v1",
    )
    assert {item["kind"] for item in document["items"]} == {"PartialObjectMetadata"}
    assert document["metadata"]["resourceVersion"].isdigit()


def test_the_first_range_the_server_can_serve_wins(api: httpx.Client) -> None:
    """A media range of another group (or an unknown as=) is skipped for the next one."""
    accept = f"application/json;as=Other;v=v1;g=example.com,{TABLE}"
    assert get(api, f"{CRONTABS}/tabled", accept).json()["kind"] == "Table"
    plain_first = f"application/json,{TABLE}"
    assert get(api, f"{CRONTABS}/tabled", plain_first).json()["kind"] == "CronTab"


def test_a_table_watch_sends_column_definitions_once(api: httpx.Client) -> None:
    """Watch events as Tables (kubectl get -w): the first carries the columns, later ones only rows."""
    query = "watch=true&resourceVersion=0&timeoutSeconds=2"
    lines: list[dict[str, Any]] = []
    with api.stream("GET", f"{CRONTABS}?{query}", headers={"accept": TABLE}) as response:
        assert response.headers["content-type"] == "application/json"
        for line in response.iter_lines():
            if line:
                lines.append(json.loads(line))
            if len(lines) == 2:
                break
    assert [event["type"] for event in lines] == ["ADDED", "ADDED"]
    assert [event["object"]["kind"] for event in lines] == ["Table", "Table"]
    assert lines[0]["object"]["columnDefinitions"]
    assert not lines[1]["object"].get("columnDefinitions")


def test_yaml_is_served_when_asked(api: httpx.Client) -> None:
    """kube serves objects and lists as YAML (sigs.k8s.io/yaml: keys sorted, go-yaml's double quotes); a
    watch cannot be YAML (no stream serializer): 406."""
    response = get(api, f"{CRONTABS}/tabled", "application/yaml")
    assert response.headers["content-type"] == "application/yaml"
    assert b"kind: CronTab" in response.content
    document = yaml.safe_load(response.content)
    assert document == get(api, f"{CRONTABS}/tabled", "application/json").json()
    assert (
        f'resourceVersion: "{document["metadata"]["resourceVersion"]}"'.encode() in response.content
    )
    listed = get(api, CRONTABS, "application/yaml")
    assert listed.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(listed.content)["kind"] == "CronTabList"
    watch = api.get(f"{CRONTABS}?watch=true", headers={"accept": "application/yaml"})
    assert_status(watch, 406, "NotAcceptable")


def test_an_unservable_accept_is_406(api: httpx.Client) -> None:
    """kube negotiates the output first: a media type it cannot serve is 406 (negotiation/errors.go)."""
    response = api.get(f"{CRONTABS}/tabled", headers={"accept": "text/html"})
    status = assert_status(response, 406, "NotAcceptable")
    assert status["message"].startswith("only the following media types are accepted: ")
