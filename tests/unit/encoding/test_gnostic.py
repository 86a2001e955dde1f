"""Tests of generator.openapi_v2 (Swagger 2.0 from our OpenAPI v3 documents) and apiserver.encoding.gnostic (that
document as gnostic protobuf): a tiny decoder reads the bytes back, and kubectl 1.27/1.28, the versions that
need /openapi/v2, run explain and create against a local server that serves them."""

from __future__ import annotations

import copy
import json
import re
import struct
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

import generated
from apiserver.encoding.gnostic import ACCEPT, CONTENT_TYPE, encode_swagger
from generator.openapi_v2 import swagger_document, swagger_schema
from tests.stubserver import kubectl_for, serving

OPENAPI = Path(generated.__file__).parent / "openapi"
META = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1."
CRONTAB = "com.example.stable.v1.CronTab"
CRONTAB_ITEM = "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"


def v3_documents() -> list[dict[str, Any]]:
    return [
        json.loads(p.read_text())
        for p in sorted(OPENAPI.glob("*.json"))
        if p.stem not in ("aggregate", "swagger")
    ]


@pytest.fixture(scope="module")
def swagger() -> dict[str, Any]:
    return swagger_document(v3_documents())


# --- a tiny protobuf decoder ---------------------------------------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return result, pos


def fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs; fixed64 values come back as 8 raw bytes."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        wire = key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        else:
            assert wire == 2, f"unexpected wire type {wire}"
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        out.append((key >> 3, value))
    return out


def many(data: bytes, number: int) -> list[Any]:
    return [value for n, value in fields(data) if n == number]


def one(data: bytes, number: int) -> Any:
    values = many(data, number)
    assert len(values) == 1, f"field {number}: {values!r}"
    return values[0]


def text(data: bytes, number: int) -> str:
    values = many(data, number)
    return bytes(values[-1]).decode() if values else ""


def texts(data: bytes, number: int) -> list[str]:
    return [bytes(v).decode() for v in many(data, number)]


def named(data: bytes, number: int) -> dict[str, bytes]:
    """gnostic's Named* lists: repeated {1 name, 2 value}."""
    return {text(entry, 1): one(entry, 2) for entry in many(data, number)}


def extensions(data: bytes, number: int) -> dict[str, Any]:
    """vendor_extension (NamedAny) entries, their Any.yaml parsed back (it is JSON text)."""
    return {name: json.loads(text(value, 2)) for name, value in named(data, number).items()}


def double(data: bytes, number: int) -> float:
    value: float = struct.unpack("<d", one(data, number))[0]
    return value


def signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


# --- generator.openapi_v2 ------------------------------------------------------------------------


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema below ``node``: a ``properties`` mapping is not one, its values are (JSONSchemaProps has
    properties named allOf and not)."""
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for field in value.values():
                    yield from _walk(field)
            else:
                yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_definitions_are_every_component_schema(swagger: dict[str, Any]) -> None:
    names = {name for d in v3_documents() for name in d["components"]["schemas"]}
    assert set(swagger["definitions"]) == names
    assert swagger["swagger"] == "2.0"
    assert swagger["securityDefinitions"]["BearerToken"]["type"] == "apiKey"


def test_every_schema_is_one_kubectl_can_parse(swagger: dict[str, Any]) -> None:
    """kube-openapi's proto.NewOpenAPIData rejects the whole document for one bad schema."""
    for schema in _walk(swagger["definitions"]):
        assert not {"allOf", "anyOf", "oneOf", "not", "nullable"} & set(schema)
        if "$ref" in schema:
            assert schema["$ref"].removeprefix("#/definitions/") in swagger["definitions"]
        if schema.get("type") == "array":
            assert isinstance(schema["items"], dict)
        assert not isinstance(schema.get("type"), list)
    assert "#/components/" not in json.dumps(swagger)  # every v3 reference rewritten


def test_kind_schema_links_metadata_by_ref(swagger: dict[str, Any]) -> None:
    crontab = swagger["definitions"][CRONTAB]
    assert crontab["properties"]["metadata"] == {
        "$ref": META + "ObjectMeta",
        "description": "Standard object's metadata.",
    }
    assert crontab["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    ]
    spec = crontab["properties"]["spec"]["properties"]
    assert spec["replicas"] == {"minimum": 0, "type": "integer"}


def test_every_kind_has_a_patch_operation_with_field_validation(swagger: dict[str, Any]) -> None:
    """kubectl 1.27/1.28 decide on server-side validation from these (op-level) parameters. Create-only
    kinds (the access reviews) have one POST and nothing to patch, as in kube's document."""
    served = {
        (gvk["group"], gvk["version"], gvk["kind"])
        for item in swagger["paths"].values()
        for method, operation in item.items()
        if method not in ("parameters", "post")
        for gvk in [operation["x-kubernetes-group-version-kind"]]
    }
    patched = {
        (gvk["group"], gvk["version"], gvk["kind"])
        for item in swagger["paths"].values()
        if "patch" in item
        for gvk in [item["patch"]["x-kubernetes-group-version-kind"]]
        if "fieldValidation" in {p["name"] for p in item["patch"]["parameters"]}
    }
    assert served == patched
    assert ("stable.example.com", "v1", "CronTab") in patched


def test_operations_move_request_bodies_and_media_types(swagger: dict[str, Any]) -> None:
    item = swagger["paths"][CRONTAB_ITEM]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    assert item["parameters"][0] == {
        "name": "name",
        "in": "path",
        "required": True,
        "description": "name of the CronTab",
        "type": "string",
        "uniqueItems": True,
    }
    patch = item["patch"]
    assert patch["parameters"][0] == {
        "name": "body",
        "in": "body",
        "required": True,
        "schema": {"$ref": META + "Patch"},
    }
    assert "application/merge-patch+json" in patch["consumes"]
    assert patch["produces"] == ["application/json", "application/yaml"]
    assert patch["responses"]["200"] == {
        "description": "OK",
        "schema": {"$ref": f"#/definitions/{CRONTAB}"},
    }
    assert patch["x-kubernetes-action"] == "patch"
    delete = item["delete"]
    assert delete["parameters"][0]["schema"] == {"$ref": META + "DeleteOptions"}
    assert "required" not in delete["parameters"][0]


def test_schema_rules_of_kube_apiserver_v2_publishing() -> None:
    v3 = {
        "type": "object",
        "required": ["a", "gone"],
        "writeOnly": True,
        "properties": {
            "a": {"allOf": [{"$ref": "#/components/schemas/A"}], "description": "d"},
            "both": {"allOf": [{"$ref": "#/components/schemas/A"}, {"type": "object"}]},
            "gone": {"type": "string", "nullable": True},
            "free": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"x": {"type": "string"}},
            },
            "loose": {"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {}},
            "port": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
            "choice": {"type": "string", "oneOf": [{"enum": ["a"]}], "not": {"enum": ["b"]}},
            "map": {"type": "object", "additionalProperties": {"type": "string", "nullable": True}},
        },
    }
    assert swagger_schema(v3) == {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"description": "d", "$ref": "#/definitions/A"},
            "both": {"allOf": [{"$ref": "#/definitions/A"}, {"type": "object"}]},
            "gone": {},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "loose": {"x-kubernetes-preserve-unknown-fields": True},
            "port": {"x-kubernetes-int-or-string": True},
            "choice": {"type": "string"},
            "map": {"type": "object"},
        },
    }


def test_component_parameters_and_responses_become_definitions() -> None:
    v3 = {
        "openapi": "3.0.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/x": {
                "get": {
                    "parameters": [{"$ref": "#/components/parameters/q"}],
                    "responses": {"404": {"$ref": "#/components/responses/missing"}},
                }
            }
        },
        "components": {
            "parameters": {"q": {"name": "q", "in": "query", "schema": {"type": "integer"}}},
            "responses": {"missing": {"description": "not found"}},
        },
    }
    swagger = swagger_document([v3])
    assert swagger["info"] == {"title": "T", "version": "1"}
    assert swagger["parameters"] == {"q": {"name": "q", "in": "query", "type": "integer"}}
    assert swagger["responses"] == {"missing": {"description": "not found"}}
    get = swagger["paths"]["/x"]["get"]
    assert get["parameters"] == [{"$ref": "#/parameters/q"}]
    assert get["responses"] == {"404": {"$ref": "#/responses/missing"}}


# --- apiserver.encoding.gnostic ---------------------------------------------------------------------------


def test_document_round_trip_of_key_fields(swagger: dict[str, Any]) -> None:
    document = encode_swagger(swagger)
    assert text(document, 1) == "2.0"
    assert text(one(document, 2), 1) == "Kubernetes"
    definitions = named(one(document, 9), 1)
    assert list(definitions) == list(swagger["definitions"])
    crontab = definitions[CRONTAB]
    assert texts(one(crontab, 22), 1) == ["object"]
    assert extensions(crontab, 31)["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    ]
    properties = named(one(crontab, 25), 1)
    assert text(properties["metadata"], 1) == META + "ObjectMeta"
    assert text(properties["metadata"], 4) == "Standard object's metadata."
    spec = named(one(properties["spec"], 25), 1)
    assert text(spec["cronSpec"], 4) == "The cron schedule, in cron format."
    assert text(spec["cronSpec"], 13).startswith("^(")
    assert texts(one(spec["replicas"], 22), 1) == ["integer"]
    assert many(spec["replicas"], 9) == []  # minimum 0 is proto3's default value: not written
    conditions = named(one(properties["status"], 25), 1)["conditions"]
    assert texts(one(conditions, 22), 1) == ["array"]
    condition = one(one(conditions, 23), 1)
    assert "lastTransitionTime" in named(one(condition, 25), 1)
    assert extensions(conditions, 31)["x-kubernetes-list-map-keys"] == ["type"]


def test_paths_operations_and_parameters(swagger: dict[str, Any]) -> None:
    document = encode_swagger(swagger)
    paths = named(one(document, 8), 2)
    assert list(paths) == list(swagger["paths"])
    item = paths[CRONTAB_ITEM]
    path_parameters = [one(one(one(p, 1), 2), 4) for p in many(item, 9)[:2]]
    assert [(text(p, 4), one(p, 1), text(p, 5)) for p in path_parameters] == [
        ("name", 1, "string"),
        ("namespace", 1, "string"),
    ]
    patch = one(item, 8)
    assert extensions(patch, 13)["x-kubernetes-group-version-kind"] == {
        "group": "stable.example.com",
        "kind": "CronTab",
        "version": "v1",
    }
    parameters = [one(p, 1) for p in many(patch, 8)]
    body = one(parameters[0], 1)
    assert (text(body, 2), text(body, 3), one(body, 4)) == ("body", "body", 1)
    assert text(one(body, 5), 1) == META + "Patch"
    query = [text(one(one(p, 2), 3), 4) for p in parameters[1:]]
    assert query == ["dryRun", "fieldManager", "fieldValidation", "force"]
    assert texts(patch, 10) == ["https"]
    responses = named(one(patch, 9), 1)
    ok = one(responses["200"], 1)
    assert text(ok, 1) == "OK"
    assert text(one(one(ok, 2), 1), 1) == f"#/definitions/{CRONTAB}"


def test_scalar_encodings() -> None:
    schema = {
        "type": ["string", "null"],
        "minimum": 1.5,
        "maximum": -2,
        "exclusiveMinimum": True,
        "exclusiveMaximum": False,
        "maxLength": 5,
        "minLength": -1,
        "minItems": 0,
        "required": ["a", ""],
        "enum": ["x", 1, None],
        "default": {"k": [1, "ü"]},
        "format": "",
        "x-kubernetes-list-type": "map",
        "nullable": True,  # not a Swagger keyword: dropped
    }
    encoded = named(one(encode_swagger({"definitions": {"T": schema}}), 9), 1)["T"]
    assert {number for number, _ in fields(encoded)} == {7, 9, 10, 11, 12, 19, 20, 5, 22, 31}
    assert texts(one(encoded, 22), 1) == ["string", "null"]
    assert (double(encoded, 9), double(encoded, 7)) == (1.5, -2.0)
    assert one(encoded, 10) == 1
    assert (one(encoded, 11), signed(one(encoded, 12))) == (5, -1)
    assert texts(encoded, 19) == ["a", ""]  # repeated elements are written even when empty
    assert [json.loads(text(a, 2)) for a in many(encoded, 20)] == ["x", 1, None]
    assert json.loads(text(one(encoded, 5), 2)) == {"k": [1, "ü"]}
    assert extensions(encoded, 31) == {"x-kubernetes-list-type": "map"}


def test_additional_properties_items_and_all_of() -> None:
    definitions = {
        "closed": {"type": "object", "additionalProperties": False},
        "open": {"type": "object", "additionalProperties": True},
        "map": {"type": "object", "additionalProperties": {"type": "string"}},
        "list": {"type": "array", "items": {"type": "integer"}},
        "tuple": {"type": "array", "items": [{"type": "string"}, {}]},
        "combined": {"allOf": [{"$ref": "#/definitions/map"}, {"type": "object"}]},
    }
    encoded = named(one(encode_swagger({"definitions": definitions}), 9), 1)
    assert fields(one(encoded["closed"], 21)) == [(2, 0)]  # a oneof member: written though false
    assert fields(one(encoded["open"], 21)) == [(2, 1)]
    assert texts(one(one(one(encoded["map"], 21), 1), 22), 1) == ["string"]
    assert [texts(one(s, 22), 1) for s in many(one(encoded["list"], 23), 1)] == [["integer"]]
    assert many(one(encoded["tuple"], 23), 1)[1] == b""
    assert [text(s, 1) for s in many(encoded["combined"], 24)] == ["#/definitions/map", ""]


def test_parameter_kinds_responses_and_references() -> None:
    document = {
        "swagger": "2.0",
        "paths": {
            "x-paths-note": "n",
            "/p/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "type": "string"},
                    {"$ref": "#/parameters/q"},
                ],
                "get": {
                    "parameters": [
                        {"name": "h", "in": "header", "type": "string", "description": "hd"},
                        {"name": "f", "in": "formData", "type": "file", "allowEmptyValue": True},
                        {
                            "name": "q",
                            "in": "query",
                            "type": "array",
                            "items": {"type": "string", "enum": ["a"]},
                            "collectionFormat": "multi",
                            "x-q": 1,
                        },
                        {"name": "body", "in": "body", "schema": {"type": "object"}},
                    ],
                    "responses": {
                        "200": {"$ref": "#/responses/ok"},
                        "default": {
                            "description": "d",
                            "schema": {"type": "file"},
                            "headers": {"X-Rate": {"type": "integer", "description": "rate"}},
                        },
                        "x-responses": True,
                    },
                },
            },
        },
        "parameters": {"q": {"name": "q", "in": "query", "type": "integer", "maximum": 3}},
        "responses": {"ok": {"description": "fine", "schema": {"$ref": "#/definitions/T"}}},
    }
    encoded = encode_swagger(document)
    paths = one(encoded, 8)
    assert extensions(paths, 1) == {"x-paths-note": "n"}
    item = named(paths, 2)["/p/{id}"]
    path_parameter, reference = many(item, 9)
    path = one(one(one(path_parameter, 1), 2), 4)
    assert (one(path, 1), text(path, 2), text(path, 4), text(path, 5)) == (
        1,
        "path",
        "id",
        "string",
    )
    assert text(one(reference, 2), 1) == "#/parameters/q"
    get = one(item, 2)
    header, form, query, body = (one(p, 1) for p in many(get, 8))
    header = one(one(header, 2), 1)
    assert (text(header, 3), text(header, 4), text(header, 5)) == ("hd", "h", "string")
    form = one(one(form, 2), 2)
    assert (one(form, 5), text(form, 6)) == (1, "file")
    query = one(one(query, 2), 3)
    items = one(query, 8)
    assert (text(items, 1), json.loads(text(one(items, 16), 2))) == ("string", "a")
    assert text(query, 9) == "multi"
    assert extensions(query, 23) == {"x-q": 1}
    assert texts(one(one(one(body, 1), 5), 22), 1) == ["object"]
    responses = one(get, 9)
    assert extensions(responses, 2) == {"x-responses": True}
    codes = named(responses, 1)
    assert text(one(codes["200"], 2), 1) == "#/responses/ok"
    default = one(codes["default"], 1)
    assert text(one(one(default, 2), 2), 6) == "file"  # SchemaItem.file_schema
    rate = named(one(default, 3), 1)["X-Rate"]
    assert (text(rate, 1), text(rate, 18)) == ("integer", "rate")
    parameter_q = one(one(named(one(encoded, 10), 1)["q"], 2), 3)
    assert (text(parameter_q, 4), double(parameter_q, 11)) == ("q", 3.0)
    ok = named(one(encoded, 11), 1)["ok"]
    assert text(one(one(ok, 2), 1), 1) == "#/definitions/T"


def test_parameter_location_must_be_known() -> None:
    with pytest.raises(ValueError, match="cookie"):
        encode_swagger({"parameters": {"c": {"name": "c", "in": "cookie"}}})


def test_document_level_fields() -> None:
    document = {
        "swagger": "2.0",
        "info": {
            "title": "T",
            "version": "v",
            "contact": {"name": "c", "email": "e@example.com"},
            "license": {"name": "Apache-2.0"},
            "x-info": 1,
        },
        "host": "h",
        "basePath": "/b",
        "schemes": ["https"],
        "consumes": ["application/json"],
        "produces": ["application/json", "application/yaml"],
        "securityDefinitions": {
            "BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"},
            "basic": {"type": "basic"},
            "oauth": {
                "type": "oauth2",
                "flow": "implicit",
                "authorizationUrl": "https://a",
                "scopes": {"read": "r"},
            },
        },
        "security": [{"BearerToken": []}, {"oauth": ["read"]}],
        "tags": [{"name": "t", "externalDocs": {"url": "https://d"}}],
        "externalDocs": {"description": "docs", "url": "https://d"},
        "x-top": {"a": 1},
    }
    encoded = encode_swagger(document)
    assert [text(encoded, n) for n in (1, 3, 4)] == ["2.0", "h", "/b"]
    assert (texts(encoded, 5), texts(encoded, 6), texts(encoded, 7)) == (
        ["https"],
        ["application/json"],
        ["application/json", "application/yaml"],
    )
    info = one(encoded, 2)
    assert (text(one(info, 5), 3), text(one(info, 6), 1)) == ("e@example.com", "Apache-2.0")
    assert extensions(info, 7) == {"x-info": 1}
    schemes = named(one(encoded, 13), 1)
    api_key = one(schemes["BearerToken"], 2)
    assert [text(api_key, n) for n in (1, 2, 3)] == ["apiKey", "authorization", "header"]
    assert text(one(schemes["basic"], 1), 1) == "basic"
    implicit = one(schemes["oauth"], 3)
    assert (text(implicit, 4), named(one(implicit, 3), 1)) == ("https://a", {"read": b"r"})
    security = [named(r, 1) for r in many(encoded, 12)]
    assert [{k: texts(v, 1) for k, v in r.items()} for r in security] == [
        {"BearerToken": []},
        {"oauth": ["read"]},
    ]
    tag = one(encoded, 14)
    assert (text(tag, 1), text(one(tag, 3), 2), text(one(encoded, 15), 1)) == (
        "t",
        "https://d",
        "docs",
    )
    assert extensions(encoded, 16) == {"x-top": {"a": 1}}


def test_empty_document() -> None:
    assert encode_swagger({}) == b""


# --- real kubectl --------------------------------------------------------------------------------


def _discovery(swagger: dict[str, Any]) -> dict[str, Any]:
    """Legacy discovery documents derived from the item paths and their patch operations' GVKs."""
    resources: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for path, item in swagger["paths"].items():
        match = re.fullmatch(
            r"/(?:api|apis/([^/]+))/([^/]+)/(namespaces/\{namespace\}/)?([^/{]+)/\{name\}", path
        )
        if match is None or "patch" not in item:
            continue
        group, version, namespaced, plural = match.group(1) or "", *match.group(2, 3, 4)
        kind = item["patch"]["x-kubernetes-group-version-kind"]["kind"]
        verbs = ["create", "delete", "get", "list", "patch", "update"]
        resources.setdefault((group, version), []).append(
            {
                "name": plural,
                "singularName": kind.lower(),
                "namespaced": bool(namespaced),
                "kind": kind,
                "verbs": verbs,
            }
        )
    groups: dict[str, list[dict[str, str]]] = {}
    for group, version in resources:
        if group:
            groups.setdefault(group, []).append(
                {"groupVersion": f"{group}/{version}", "version": version}
            )
    documents: dict[str, Any] = {
        "/api": {"kind": "APIVersions", "versions": ["v1"]},
        "/apis": {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {"name": g, "versions": v, "preferredVersion": v[0]} for g, v in groups.items()
            ],
        },
    }
    for (group, version), listed in resources.items():
        group_version = f"{group}/{version}" if group else version
        documents[f"/apis/{group_version}" if group else "/api/v1"] = {
            "kind": "APIResourceList",
            "groupVersion": group_version,
            "resources": listed,
        }
    return documents


class StubHandler(BaseHTTPRequestHandler):
    """Discovery as JSON and /openapi/v2 as gnostic protobuf; everything else (OpenAPI v3) is 404."""

    protocol_version = "HTTP/1.1"
    documents: dict[str, Any]
    openapi_v2: bytes
    validates: bool
    requests: list[tuple[str, str]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.requests.append((path, self.headers.get("Accept", "")))
        if path == "/openapi/v2":
            code, content_type, body = 200, CONTENT_TYPE, self.openapi_v2
        elif path in self.documents:
            code, content_type, body = (
                200,
                "application/json",
                json.dumps(self.documents[path]).encode(),
            )
        else:
            code, content_type, body = 404, "application/json", b'{"kind":"Status","code":404}'
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _without_field_validation(swagger: dict[str, Any]) -> dict[str, Any]:
    """A server that cannot validate: kubectl then validates on its own, against the v2 schemas."""
    stripped = copy.deepcopy(swagger)
    for item in stripped["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and "parameters" in operation:
                operation["parameters"] = [
                    p for p in operation["parameters"] if p.get("name") != "fieldValidation"
                ]
    return stripped


@pytest.fixture(scope="module", params=["server-validates", "client-validates"])
def stub(
    swagger: dict[str, Any], request: pytest.FixtureRequest
) -> Iterator[tuple[str, type[StubHandler]]]:
    served = swagger if request.param == "server-validates" else _without_field_validation(swagger)
    handler = type(
        "Handler",
        (StubHandler,),
        {
            "documents": _discovery(served),
            "openapi_v2": encode_swagger(served),
            "validates": served is swagger,
            "requests": [],
        },
    )
    with serving(handler) as url:
        yield url, handler


GOOD = """apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: x, labels: {app: a}}
spec: {cronSpec: "* * * * */5", image: busybox, replicas: 2}
"""
BAD = """apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: x}
spec: {cronSpec: "* * * * */5", image: busybox, replicas: two, bogus: 1}
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("minor", [27, 28])
def test_kubectl_explain_reads_the_protobuf_document(
    stub: tuple[str, type[StubHandler]], tmp_path: Path, minor: int
) -> None:
    url, handler = stub
    kubectl = kubectl_for(minor, url, tmp_path)
    spec = kubectl.run("explain", "crontabs.spec", "--output=plaintext-openapiv2").stdout
    assert "cronSpec\t<string>" in spec and "The cron schedule, in cron format." in spec
    labels = kubectl.run("explain", "configmaps.metadata.labels", "--output=plaintext-openapiv2")
    assert "map[string]string" in labels.stdout
    assert ("/openapi/v2", ACCEPT) in handler.requests


@pytest.mark.timeout(120)
@pytest.mark.parametrize("minor", [27, 28])
def test_kubectl_create_validates_through_openapi_v2(
    stub: tuple[str, type[StubHandler]], tmp_path: Path, minor: int
) -> None:
    """With fieldValidation listed, kubectl leaves validation to the server; without it, kubectl checks
    the object against the v2 schemas itself and must find the unknown field and the wrong type."""
    url, handler = stub
    kubectl = kubectl_for(minor, url, tmp_path)
    created = kubectl.run("create", "--dry-run=client", "-o", "name", "-f", "-", stdin=GOOD)
    assert created.stdout.strip() == "crontab.stable.example.com/x"
    bad = kubectl.run("create", "--dry-run=client", "-o", "name", "-f", "-", stdin=BAD, check=False)
    assert "proto: cannot parse" not in bad.stderr
    if handler.validates:
        assert bad.returncode == 0, bad.stderr
    else:
        assert bad.returncode != 0
        assert 'unknown field "bogus"' in bad.stderr
        assert 'got "string", expected "integer"' in bad.stderr
