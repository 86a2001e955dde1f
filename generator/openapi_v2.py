"""The Swagger 2.0 document kube-apiserver publishes at /openapi/v2, derived from our OpenAPI v3 documents.

kubectl 1.27 and 1.28 fetch /openapi/v2 (as gnostic protobuf, see apiserver/gnostic.py) before every
``create -f``/``apply -f``, and fail when it is missing (API-CONVENTIONS.md §4.2). What they read from it:

- the patch operation of each kind, found by its ``x-kubernetes-group-version-kind`` object, and whether its
  own (not the path's) parameters include the ``fieldValidation`` query parameter: if so the server
  validates and kubectl does not;
- every definition, parsed by kube-openapi's ``proto.NewOpenAPIData``, which fails the whole command on a
  single definition it cannot read. It follows ``$ref`` but ignores ``allOf``/``anyOf``, wants exactly one
  ``items`` schema on arrays and one type per schema. So the conversion applies the rules kube-apiserver
  uses when publishing CRD schemas as v2 (apiextensions ``ToStructuralOpenAPIV2``): ``allOf: [$ref]``
  becomes the ``$ref``, ``anyOf``/``oneOf``/``not`` go, nullable and preserve-unknown-fields schemas lose
  their ``items``/``properties`` (nullable ones their type too), and an array left without items loses
  its type.
"""

from __future__ import annotations

from typing import Any

V3_SCHEMAS = "#/components/schemas/"
V3_PARAMETERS = "#/components/parameters/"
V3_RESPONSES = "#/components/responses/"
OPERATIONS = ("get", "put", "post", "delete", "options", "head", "patch")
# JSON Schema keywords Swagger 2.0 keeps (its "Schema Object"); everything else but x-* is dropped.
SCHEMA_KEYWORDS = frozenset(
    {
        "$ref", "format", "title", "description", "default", "multipleOf", "maximum",
        "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
        "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "required", "enum",
        "additionalProperties", "type", "items", "allOf", "properties", "discriminator", "readOnly",
        "xml", "externalDocs", "example",
    }
)  # fmt: skip
# A non-body parameter carries these of its v3 `schema` inline.
PARAMETER_SCHEMA_KEYWORDS = (
    "type", "format", "items", "default", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "enum", "multipleOf",
)  # fmt: skip
SECURITY_DEFINITIONS = {
    "BearerToken": {
        "type": "apiKey",
        "name": "authorization",
        "in": "header",
        "description": "Bearer Token authentication",
    }
}


def _ref(ref: str) -> str:
    for v3, v2 in (
        (V3_SCHEMAS, "#/definitions/"),
        (V3_PARAMETERS, "#/parameters/"),
        (V3_RESPONSES, "#/responses/"),
    ):
        if ref.startswith(v3):
            return v2 + ref[len(v3) :]
    return ref


def _extensions(node: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key.startswith("x-")}


def swagger_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """One JSON schema in its Swagger 2.0 form (see the module docstring for the rules)."""
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        schema = {**{k: v for k, v in schema.items() if k != "allOf"}, "$ref": all_of[0]["$ref"]}
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in SCHEMA_KEYWORDS and not key.startswith("x-"):
            continue
        if key == "$ref":
            result[key] = _ref(value)
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            result[key] = swagger_schema(value)
        elif key == "allOf" or (key == "items" and isinstance(value, list)):
            result[key] = [swagger_schema(item) for item in value]
        elif key == "properties":
            result[key] = {name: swagger_schema(sub) for name, sub in value.items()}
        else:
            result[key] = value
    if schema.get("format") == "int-or-string" and "oneOf" in schema:
        result["type"] = "string"  # kube's v2 IntOrString: a string of format int-or-string
    if schema.get("nullable") is True:
        for key in ("type", "items", "properties"):
            result.pop(key, None)
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        result.pop("items", None)
        result.pop("properties", None)
    if result.get("type") == "array" and "items" not in result:
        del result["type"]
    nullable = {name for name, sub in schema.get("properties", {}).items() if sub.get("nullable")}
    if nullable and "required" in result:
        result["required"] = [name for name in result["required"] if name not in nullable]
        if not result["required"]:
            del result["required"]
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict) and additional.get("nullable") is True:
        del result["additionalProperties"]
    return result


def _parameter(parameter: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in parameter:
        return {"$ref": _ref(parameter["$ref"])}
    result: dict[str, Any] = {
        key: parameter[key]
        for key in ("name", "in", "description", "required", "allowEmptyValue")
        if key in parameter
    }
    schema = parameter.get("schema", {})
    for key in PARAMETER_SCHEMA_KEYWORDS:
        if key in schema:
            result[key] = swagger_schema(schema[key]) if key == "items" else schema[key]
    return {**result, **_extensions(parameter)}


def _first_schema(content: dict[str, Any]) -> dict[str, Any] | None:
    for media in content.values():
        if "schema" in media:
            return swagger_schema(media["schema"])
    return None


def _response(response: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in response:
        return {"$ref": _ref(response["$ref"])}
    result: dict[str, Any] = {"description": response.get("description", "")}
    schema = _first_schema(response.get("content", {}))
    if schema is not None:
        result["schema"] = schema
    return {**result, **_extensions(response)}


def _operation(operation: dict[str, Any]) -> dict[str, Any]:
    """A v3 operation as v2: requestBody becomes the `body` parameter, media types consumes/produces."""
    result: dict[str, Any] = {
        key: operation[key]
        for key in ("description", "summary", "operationId", "tags", "deprecated")
        if key in operation
    }
    body = operation.get("requestBody")
    parameters: list[dict[str, Any]] = []
    if body is not None:
        result["consumes"] = list(body.get("content", {}))
        parameter: dict[str, Any] = {"name": "body", "in": "body"}
        if body.get("required"):
            parameter["required"] = True
        parameter["schema"] = _first_schema(body.get("content", {})) or {}
        parameters.append(parameter)
    responses = operation.get("responses", {})
    produces = [media for r in responses.values() for media in r.get("content", {})]
    if produces:
        result["produces"] = list(dict.fromkeys(produces))
    result["schemes"] = ["https"]
    parameters += [_parameter(p) for p in operation.get("parameters", [])]
    if parameters:
        result["parameters"] = parameters
    result["responses"] = {code: _response(r) for code, r in responses.items()}
    return {**result, **_extensions(operation)}


def swagger_path_item(item: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        method: _operation(item[method]) for method in OPERATIONS if method in item
    }
    if item.get("parameters"):
        result["parameters"] = [_parameter(p) for p in item["parameters"]]
    return {**result, **_extensions(item)}


def swagger_document(v3_documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Merge per-group-version OpenAPI v3 documents into one Swagger 2.0 document, as /openapi/v2 is one."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    parameters: dict[str, Any] = {}
    responses: dict[str, Any] = {}
    for document in v3_documents:
        components = document.get("components", {})
        for name, schema in components.get("schemas", {}).items():
            definitions[name] = swagger_schema(schema)
        for name, parameter in components.get("parameters", {}).items():
            parameters[name] = _parameter(parameter)
        for name, response in components.get("responses", {}).items():
            responses[name] = _response(response)
        for path, item in document.get("paths", {}).items():
            paths[path] = swagger_path_item(item)
    info = next((d["info"] for d in v3_documents if "info" in d), None)
    swagger: dict[str, Any] = {
        "swagger": "2.0",
        "info": info or {"title": "Kubernetes", "version": "unversioned"},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }
    if parameters:
        swagger["parameters"] = dict(sorted(parameters.items()))
    if responses:
        swagger["responses"] = dict(sorted(responses.items()))
    swagger["securityDefinitions"] = SECURITY_DEFINITIONS
    swagger["security"] = [{"BearerToken": []}]
    return swagger
