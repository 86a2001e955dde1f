"""The OpenAPI v3 document of one group-version, shaped as kube-apiserver publishes it.

kubectl relies on specific details (API-CONVENTIONS.md §4.1): components named ``<reversed group>.<v>.<Kind>``
carrying ``x-kubernetes-group-version-kind`` as a list, ``metadata`` linked to ObjectMeta through ``allOf``, and
for every kind a ``patch`` operation with the ``fieldValidation`` query parameter and its accepted patch types.
"""

from __future__ import annotations

import copy
import json
from functools import partial
from typing import Any

from generator.modelschema import SHARED_SCHEMAS
from generator.naming import component_name, pascal
from generator.openapi_types import hoist, scalar_components, with_scalar_references
from generator.plan import KindPlan, VersionPlan

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
OPENAPI_VERSION = "3.0.0"
INFO = {"title": "Kubernetes", "version": "unversioned"}
REF = "#/components/schemas/"
PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
)
# Listed only where the server applies it: for other kinds kubectl then sends a merge patch (§4.1).
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


def _patch_types(kind: KindPlan) -> tuple[str, ...]:
    return (*PATCH_TYPES, STRATEGIC_MERGE_PATCH) if kind.strategic_merge_patch else PATCH_TYPES


def _query(name: str, description: str, kind: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": kind, "uniqueItems": True},
    }


DRY_RUN = _query(
    "dryRun",
    "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed",
)
FIELD_MANAGER = _query(
    "fieldManager",
    "fieldManager is a name associated with the actor or entity that is making these changes.",
)
FIELD_VALIDATION = _query(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn (the default), Strict.",
)
FORCE = _query(
    "force",
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people.',
    "boolean",
)
PRETTY = _query("pretty", "If 'true', then the output is pretty printed.")
LIST_PARAMETERS = [
    _query(
        "allowWatchBookmarks",
        'allowWatchBookmarks requests watch events with type "BOOKMARK".',
        "boolean",
    ),
    _query(
        "continue",
        "The continue option should be set when retrieving more results from the server.",
    ),
    _query("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
    _query("labelSelector", "A selector to restrict the list of returned objects by their labels."),
    _query("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
    _query(
        "resourceVersion",
        "resourceVersion sets a constraint on what resource versions a request may be served from.",
    ),
    _query(
        "resourceVersionMatch",
        "resourceVersionMatch determines how resourceVersion is applied to list calls.",
    ),
    _query(
        "sendInitialEvents",
        "`sendInitialEvents=true` may be set together with `watch=true`.",
        "boolean",
    ),
    _query("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
    _query(
        "watch",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
        "boolean",
    ),
]


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "uniqueItems": True},
    }


def _json_content(ref: str) -> dict[str, Any]:
    return {media: {"schema": {"$ref": ref}} for media in ("application/json", "application/yaml")}


def _response(ref: str, description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": _json_content(ref)}


def _component(kind: KindPlan, name: str) -> str:
    definition = kind.definition
    return component_name(definition.group, kind.version.name, name, definition.server.builtin)


def _add_components(schemas: dict[str, Any], added: dict[str, Any]) -> None:
    """Components of one document; two kinds naming one type (ObjectReference) must agree on it."""
    for name, schema in added.items():
        if schemas.get(name, schema) != schema:
            raise ValueError(f"two definitions publish different schemas as {name}")
        schemas[name] = schema


def _kind_schema(kind: KindPlan) -> dict[str, Any]:
    schema = copy.deepcopy(kind.version.schema)
    if kind.definition.server.builtin:
        schema = with_scalar_references(schema)
    schema.setdefault("type", "object")
    properties = schema.setdefault("properties", {})
    properties["apiVersion"] = {
        "type": "string",
        "description": "APIVersion defines the versioned schema of this representation of an object.",
    }
    properties["kind"] = {
        "type": "string",
        "description": "Kind is a string value representing the REST resource this object represents.",
    }
    properties["metadata"] = {
        "allOf": [{"$ref": f"{REF}{META}ObjectMeta"}],
        "description": "Standard object's metadata.",
    }
    schema["x-kubernetes-group-version-kind"] = [_gvk(kind)]
    return schema


def _gvk(kind: KindPlan) -> dict[str, str]:
    return {
        "group": kind.definition.group,
        "version": kind.version.name,
        "kind": kind.definition.kind,
    }


def _list_schema(kind: KindPlan, item_ref: str) -> dict[str, Any]:
    definition = kind.definition
    return {
        "type": "object",
        "description": f"{definition.list_kind} is a list of {definition.kind}",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": item_ref}},
            "kind": {"type": "string"},
            "metadata": {"allOf": [{"$ref": f"{REF}{META}ListMeta"}]},
        },
        "x-kubernetes-group-version-kind": [
            {"group": definition.group, "version": kind.version.name, "kind": definition.list_kind}
        ],
    }


def _operation(kind: KindPlan, action: str, verb_id: str, **fields: Any) -> dict[str, Any]:
    gvk = _gvk(kind)
    return {
        "operationId": verb_id,
        "tags": [kind.api_version],
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
        **fields,
    }


def _item_operations(kind: KindPlan, ref: str, target: str, op_name: str) -> dict[str, Any]:
    """get/put/patch on one object (or one of its subresources, with ``ref`` that subresource's type)."""
    return {
        "get": _operation(
            kind,
            "get",
            f"read{op_name}",
            description=f"read the specified {target}",
            responses={"200": _response(ref)},
        ),
        "put": _operation(
            kind,
            "put",
            f"replace{op_name}",
            description=f"replace the specified {target}",
            parameters=[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
            requestBody={"required": True, "content": _json_content(ref)},
            responses={"200": _response(ref), "201": _response(ref, "Created")},
        ),
        "patch": _operation(
            kind,
            "patch",
            f"patch{op_name}",
            description=f"partially update the specified {target}",
            parameters=[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE],
            requestBody={
                "required": True,
                "content": {
                    media: {"schema": {"$ref": f"{REF}{META}Patch"}} for media in _patch_types(kind)
                },
            },
            responses={"200": _response(ref), "201": _response(ref, "Created")},
        ),
    }


def _paths(kind: KindPlan) -> dict[str, Any]:
    definition = kind.definition
    base = f"{'/apis/' + definition.group if definition.group else '/api'}/{kind.version.name}"
    name = kind.definition.kind
    ref = f"{REF}{_component(kind, name)}"
    list_ref = f"{REF}{_component(kind, definition.list_kind)}"
    ns_param = [
        _path_param("namespace", "object name and auth scope, such as for teams and projects")
    ]
    name_param = [_path_param("name", f"name of the {name}")]
    collection = (
        f"{base}/namespaces/{{namespace}}/{definition.plural}"
        if definition.namespaced
        else f"{base}/{definition.plural}"
    )
    scope_params = ns_param if definition.namespaced else []
    group_version = pascal(definition.group or "core") + pascal(kind.version.name)
    suffix = (
        f"{group_version}Namespaced{name}" if definition.namespaced else f"{group_version}{name}"
    )
    paths: dict[str, Any] = {
        collection: {
            "parameters": [*scope_params, PRETTY],
            "get": _operation(
                kind,
                "list",
                f"list{suffix}",
                description=f"list objects of kind {name}",
                parameters=LIST_PARAMETERS,
                responses={"200": _response(list_ref)},
            ),
            "post": _operation(
                kind,
                "post",
                f"create{suffix}",
                description=f"create a {name}",
                parameters=[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
                requestBody={"required": True, "content": _json_content(ref)},
                responses={
                    "200": _response(ref),
                    "201": _response(ref, "Created"),
                    "202": _response(ref, "Accepted"),
                },
            ),
            "delete": _operation(
                kind,
                "deletecollection",
                f"deleteCollection{suffix}",
                description=f"delete collection of {name}",
                parameters=LIST_PARAMETERS,
                responses={"200": _response(f"{REF}{META}Status")},
            ),
        },
        f"{collection}/{{name}}": {
            "parameters": [*name_param, *scope_params, PRETTY],
            **_item_operations(kind, ref, name, suffix),
            "delete": _operation(
                kind,
                "delete",
                f"delete{suffix}",
                description=f"delete a {name}",
                parameters=[DRY_RUN],
                requestBody={"content": _json_content(f"{REF}{META}DeleteOptions")},
                responses={"200": _response(ref), "202": _response(ref, "Accepted")},
            ),
        },
    }
    if definition.namespaced:
        paths[f"{base}/{definition.plural}"] = {
            "parameters": [PRETTY],
            "get": _operation(
                kind,
                "list",
                f"list{group_version}{name}ForAllNamespaces",
                description=f"list objects of kind {name}",
                parameters=LIST_PARAMETERS,
                responses={"200": _response(list_ref)},
            ),
        }
    if kind.version.status_subresource:
        paths[f"{collection}/{{name}}/status"] = {
            "parameters": [*name_param, *scope_params, PRETTY],
            **_item_operations(kind, ref, f"status of the specified {name}", f"{suffix}Status"),
        }
    if kind.version.scale_subresource is not None:
        scale_ref = f"{REF}io.k8s.api.autoscaling.v1.Scale"
        paths[f"{collection}/{{name}}/scale"] = {
            "parameters": [*name_param, *scope_params, PRETTY],
            **_item_operations(kind, scale_ref, f"scale of the specified {name}", f"{suffix}Scale"),
        }
    return _served(paths, definition.server.verbs)


_ACTION_VERBS = {"post": "create", "put": "update"}  # other actions are named as their verbs
_METHODS = ("get", "put", "post", "delete", "patch")


def _served(paths: dict[str, Any], verbs: tuple[str, ...]) -> dict[str, Any]:
    """Only the operations of the verbs a kind serves (all when it names none), as kube documents a
    create-only kind such as SelfSubjectAccessReview with one POST."""
    if not verbs:
        return paths
    served: dict[str, Any] = {}
    for path, item in paths.items():
        kept = {
            key: value
            for key, value in item.items()
            if key not in _METHODS
            or _ACTION_VERBS.get(value["x-kubernetes-action"], value["x-kubernetes-action"])
            in verbs
        }
        if any(key in _METHODS for key in kept):
            served[path] = kept
    return served


def _without_empty_defaults(node: Any) -> Any:
    """kube-openapi writes `default: {}` on struct fields, which is not valid against a struct with required
    fields; the OpenAPI validator rightly rejects that, so those no-op defaults are dropped."""
    if isinstance(node, dict):
        return {
            k: _without_empty_defaults(v)
            for k, v in node.items()
            if not (k == "default" and v == {})
        }
    if isinstance(node, list):
        return [_without_empty_defaults(v) for v in node]
    return node


def _without_patterns(node: Any) -> Any:
    """Schema patterns are RE2 (Kubernetes' dialect, e.g. `(?i)`), not the ECMA 262 the OpenAPI validator
    assumes; the check stage has already compiled each one, so the structural validation skips them."""
    if isinstance(node, dict):
        return {
            k: _without_patterns(v)
            for k, v in node.items()
            if not (k == "pattern" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_without_patterns(v) for v in node]
    return node


def validate_document(document: dict[str, Any]) -> None:
    """The whole document against the OpenAPI 3.0 specification (tests validate every shipped one so). The
    validator is imported here, by the runs that render a group-version: 0.2 s (it pulls in requests and
    pydantic-settings), which the other runs and the server's imports of this module do not pay."""
    from openapi_spec_validator import validate as validate_spec

    validate_spec(_without_patterns(document))


def _validate_schemas(document: dict[str, Any]) -> None:
    """The document's schemas against the specification, without its paths. The schemas come from the
    definitions; the paths are the generator's own, the same for every kind but for names and which
    subresources and verbs it has, and validating them was 80% of a document's validation (openapi-spec-validator
    walks each kind's schema again under every operation that refers to it). The
    tests validate whole documents, paths included, for every shipped definition and every combination of
    scope, subresources and verbs (tests/unit/generator/test_openapi_documents.py)."""
    validate_document({**document, "paths": {}})


def group_version_document(version: VersionPlan, validate: bool = True) -> dict[str, Any]:
    """The whole document for one group-version, its schemas validated against the OpenAPI 3.0 specification
    (``validate``; a server publishing CRDs skips it: seconds for a large CRD, and the schema rules the CRD
    passed already make its schemas valid ones)."""
    shared = _without_empty_defaults(json.loads(SHARED_SCHEMAS.read_text())["schemas"])
    schemas: dict[str, Any] = dict(shared)
    paths: dict[str, Any] = {}
    for kind in version.kinds:
        if not kind.version.served:
            continue
        definition = kind.definition
        item = _component(kind, definition.kind)
        schema, named = hoist(
            _kind_schema(kind), definition.server.openapi_types, partial(_component, kind)
        )
        _add_components(schemas, {item: schema, **named})
        schemas[_component(kind, definition.list_kind)] = _list_schema(kind, f"{REF}{item}")
        if definition.server.builtin:
            schemas.update(scalar_components(schemas))
        if definition.server.standalone:  # a subresource's body has no path of its own
            paths.update(_paths(kind))
    document = {
        "openapi": OPENAPI_VERSION,
        "info": INFO,
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items()))},
    }
    if validate:
        _validate_schemas(document)
    return document
