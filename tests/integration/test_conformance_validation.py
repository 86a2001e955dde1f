"""The kubectl-validate cases (tests/fixtures/validation-cases/kubectl-validate) POSTed to a real server.

Each case file holds one or more YAML documents, each preceded by a comment with the ``metav1.Status`` recorded
for it. A temporary project serves the built-in kinds (ConfigMap, Secret, Namespace, Event, APIService,
CustomResourceDefinition among them) and the cases' CRD ``crds/cel_basic.yaml``, unmodified; every document of a served kind is POSTed and the answer must
match the recording: code, reason, message, details and every cause's reason, field and message.

What the recordings are, and how they are read:

* They are kubectl-validate's expected outputs. For schema and metadata errors kubectl-validate runs
  kube-apiserver's own validators, so its causes are the server's. Two things differ from what kube-apiserver
  sends, and are normalised in :func:`expected_status`: kubectl-validate calls the core group "core", giving
  ``ConfigMap.core "x" is invalid`` and ``details.group: core``; kube-apiserver formats the kind with
  ``GroupKind.String()``, which is the bare kind for the core group (``ConfigMap "x" is invalid``), and the
  empty group is omitted from ``details``.
* kube-apiserver decodes a built-in kind's body into Go structs before validating, so for its built-in
  ConfigMap a field of the wrong JSON type (error_array_instead_of_map: ``data`` as a list) is a 400
  "cannot be handled" there, while for a custom resource it is the recorded 422 schema error (kubectl-validate
  validates every kind against its schema). apiforge answers the 400 for its built-in kinds, and that is
  asserted instead of the recording, with the Go decoder's error as kube-apiserver v1.34.4 words it.
* Where the recording is an InternalError (500) of kubectl-validate itself ("failed to retrieve validator",
  a Go unmarshal error), no API server answered it; those cases assert kube-apiserver's answer instead, from
  k8s.io/apiserver pkg/endpoints/handlers (``transformDecodeError``): a body that does not decode into the
  kind is a 400 BadRequest ``<Kind> in version "<v>" cannot be handled as a <Kind>: <decode error>``.

Documents that cannot be run are skipped with the reason (``pytest -rs`` lists them): kinds not served here
(Pod, Deployment, JobSet whose CRD was not copied), and documents that hold no object. The CEL cases (``x-kubernetes-validations`` of ``cel_basic.yaml``) run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
import yaml

from generator.pipeline import GenerateConfig, generate
from tests.serverproc import FIXTURES, ServerProcess, free_port

CASES: Final = FIXTURES / "validation-cases" / "kubectl-validate"
CEL_BASIC: Final = CASES / "crds" / "cel_basic.yaml"

# (apiVersion, kind) -> collection URL; objects without a namespace go to "default", as kubectl sends them
CELBASICS: Final = "/apis/stable.example.com/v1/namespaces/default/celbasics"
SERVED: Final = {
    ("v1", "ConfigMap"): "/api/v1/namespaces/default/configmaps",
    ("v1", "Secret"): "/api/v1/namespaces/default/secrets",
    ("v1", "Event"): "/api/v1/namespaces/default/events",
    ("v1", "Namespace"): "/api/v1/namespaces",
    ("stable.example.com/v1", "CELBasic"): CELBASICS,
    ("apiregistration.k8s.io/v1", "APIService"): "/apis/apiregistration.k8s.io/v1/apiservices",
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): (
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    ),
}
# kind "configmap" (error_invalid_kind) is POSTed where kubectl would send it: to configmaps
MISSPELT_KINDS: Final = {("v1", "configmap"): SERVED[("v1", "ConfigMap")]}

NOT_SERVED: Final = {
    "Pod": "Pod is not served (builtin/definitions/core holds ConfigMap, Secret, Namespace, Service, Event)",
    "Deployment": "apps/v1 Deployment is not served",
    "JobSet": "the JobSet CRD (kubectl-validate testcases/crds/jobset.yaml) is not among the fixtures"
    " (tests/fixtures/SOURCES.md), so the kind cannot be served",
}
NO_OBJECT: Final = "the document holds no object (only comments, or nothing)"

# Recordings that are not kube-apiserver's answer (kubectl-validate's own InternalErrors, or a built-in kind's
# decode error): kube-apiserver's answer is asserted instead.
KUBE_ANSWERS: Final = {
    # recorded as a success by kubectl-validate, whose validators are apimachinery's; kube-apiserver's core
    # ValidateObjectMeta also runs validateKubeFinalizerName (pkg/apis/core/validation/validation.go), which
    # refuses a finalizer without a "/" that is not a standard one (the oracle's finalizers-gc golden, "create
    # with an invalid finalizer", records kube-apiserver v1.34.4 doing so)
    "configmap": (
        422,
        "Invalid",
        'ConfigMap "myapp" is invalid: metadata.finalizers[0]: Invalid value: "finalizers.compute.linkedin'
        '.com": name is neither a standard finalizer name nor is it fully qualified',
    ),
    # the kind "configmap" is not registered: the decoder fails before validation
    "error_invalid_kind": (400, "BadRequest", ""),
    # not an InternalError, but kube-apiserver's answer differs from kubectl-validate's (module docstring);
    # kube-apiserver v1.34.4's whole message
    "error_array_instead_of_map": (
        400,
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go'
        " struct field ConfigMap.data of type map[string]string",
    ),
    # ObjectMeta.finalizers is []string: decoding the body fails (for a CR, schemaobjectmeta.GetObjectMeta
    # fails the same way inside the decoder), so this is a 400 "cannot be handled", never a 422
    "error_map_instead_of_array": (
        400,
        "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go'
        " struct field ObjectMeta.metadata.finalizers of type []string",
    ),
}


@dataclass(frozen=True)
class Document:
    id: str
    recorded: dict[str, Any] | None  # the Status in the comment before the object
    obj: Any


def documents(path: Path) -> list[Document]:
    """The documents of a case file, each with the Status recorded in its leading comment."""
    chunks: list[list[str]] = [[]]
    for line in path.read_text().splitlines():
        if line.rstrip() == "---":
            chunks.append([])
        else:
            chunks[-1].append(line)
    found = []
    for chunk in chunks:
        text = "\n".join(chunk)
        comment = "\n".join(line[1:] for line in chunk if line.startswith("#"))
        recorded = None
        if "{" in comment:
            recorded, _ = json.JSONDecoder().raw_decode(comment[comment.index("{") :])
        if text.strip():  # blank chunks are what precedes a leading "---" or follows a trailing one
            found.append(Document("", recorded, yaml.safe_load(text)))
    if not found:
        return [Document(path.stem, None, None)]  # nothing but separators
    if len(found) == 1:
        return [Document(path.stem, found[0].recorded, found[0].obj)]
    return [Document(f"{path.stem}[{i}]", d.recorded, d.obj) for i, d in enumerate(found)]


ALL_DOCUMENTS: Final = [
    doc for path in sorted((CASES / "manifests").glob("*.yaml")) for doc in documents(path)
]


def stem(document: Document) -> str:
    return document.id.split("[")[0]


def skip_reason(document: Document) -> str | None:
    obj = document.obj
    if not isinstance(obj, dict):
        return NO_OBJECT
    key = (obj.get("apiVersion"), obj.get("kind"))
    if key not in SERVED and key not in MISSPELT_KINDS:
        return NOT_SERVED[str(obj.get("kind"))]
    return None


def params() -> list[Any]:
    return [pytest.param(document, id=document.id) for document in ALL_DOCUMENTS]


def expected_status(recorded: dict[str, Any]) -> dict[str, Any]:
    """The recording as kube-apiserver words it: the core group is "" (see the module docstring)."""
    status: dict[str, Any] = json.loads(json.dumps(recorded))
    details = status.get("details") or {}
    if details.get("group") == "core":
        del details["group"]
        status["message"] = status["message"].replace(
            f"{details['kind']}.core ", f"{details['kind']} ", 1
        )
    return status


# -- the server ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("validation-project")
    (root / "definitions" / "stable.example.com").mkdir(parents=True)
    shutil.copy(CEL_BASIC, root / "definitions" / "stable.example.com" / "celbasic.yaml")
    generate(GenerateConfig(root / "definitions", root / "generated"))
    return root


@pytest.fixture(scope="module")
def server(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Overrides conftest's server with one running from the temporary project; ``client`` uses it."""
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), cwd=project)
    process.start()
    yield process
    process.stop()


def post(client: httpx.Client, obj: dict[str, Any], strict: bool) -> httpx.Response:
    key = (str(obj.get("apiVersion")), str(obj.get("kind")))
    url = SERVED.get(key) or MISSPELT_KINDS[key]
    return client.post(url, json=obj, params={"fieldValidation": "Strict"} if strict else None)


# -- the cases -------------------------------------------------------------------------------------


@pytest.mark.parametrize("document", params())
def test_case(client: httpx.Client, document: Document) -> None:
    reason = skip_reason(document)
    if reason:
        pytest.skip(reason)
    assert document.recorded is not None, f"{document.id} has no recorded answer"
    causes = (document.recorded.get("details") or {}).get("causes") or []
    # unknown fields are errors only under Strict (kubectl --validate=strict sends it)
    strict = any("unknown field" in cause.get("message", "") for cause in causes)
    response = post(client, document.obj, strict)

    if stem(document) in KUBE_ANSWERS:
        code, status_reason, prefix = KUBE_ANSWERS[stem(document)]
        assert response.status_code == code, response.text
        status = response.json()
        assert (status["kind"], status["code"], status["reason"]) == ("Status", code, status_reason)
        assert status["message"].startswith(prefix), status[
            "message"
        ]  # the whole message, or its start
        return

    if document.recorded["status"] == "Success":
        assert response.status_code == 201, response.text
        created = response.json()
        for field, value in document.obj.items():
            if field not in ("apiVersion", "kind", "metadata"):
                assert created[field] == value
        assert created["metadata"]["name"] == document.obj["metadata"]["name"]
        return

    expected = expected_status(document.recorded)
    assert response.status_code == expected["code"], response.text
    status = response.json()
    assert (status["kind"], status["apiVersion"]) == ("Status", "v1")
    assert (status["status"], status["reason"]) == ("Failure", expected["reason"])
    # the causes first: their differences are the easiest to read
    assert [(c.get("reason"), c.get("field")) for c in status["details"]["causes"]] == [
        (c.get("reason"), c.get("field")) for c in expected["details"]["causes"]
    ]
    assert status["details"]["causes"] == expected["details"]["causes"]
    assert status["details"] == expected["details"]
    assert status["message"] == expected["message"]


def test_inventory() -> None:
    """Every document of every case file is run or skipped with a reason; none is silently dropped."""
    run = [d.id for d in ALL_DOCUMENTS if skip_reason(d) is None]
    assert run == [
        "apiservice",
        "configmap",
        "empty_secret",
        "error_array_instead_of_map",
        "error_cel_basic",
        "error_cel_basic_multiple",
        "error_crd_typo",
        "error_invalid_kind",
        "error_invalid_label",
        "error_invalid_name",
        "error_map_instead_of_array",
        "error_missing_name",
        "error_multiple_resources_all_invalid[1]",
        "error_name_exceeds_max_length",
        "error_x_list_map_default",
    ]
    skipped = {skip_reason(d) for d in ALL_DOCUMENTS} - {None}
    assert skipped == {*NOT_SERVED.values(), NO_OBJECT}  # only kinds out of scope, and no object
    disabled = sorted(p.name for p in (CASES / "manifests").glob("*.disabled"))
    assert disabled == [  # disabled upstream; not collected
        "error_api_deprecation.yaml.disabled",
        "error_missing_image_deployment.yaml.disabled",
    ]


# -- nulls: found while running the cases ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "obj", "field"),
    [
        pytest.param(
            SERVED[("v1", "ConfigMap")],
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nulls"}, "data": None},
            "data",
            id="ConfigMap-data",
        ),
        pytest.param(
            CELBASICS,
            {
                "apiVersion": "stable.example.com/v1",
                "kind": "CELBasic",
                "metadata": {"name": "nulls"},
                "value": 2,
                "other_value": None,
            },
            "other_value",
            id="CELBasic-other_value",
        ),
    ],
)
def test_non_nullable_null_is_dropped(
    client: httpx.Client, url: str, obj: dict[str, Any], field: str
) -> None:
    response = client.post(url, json=obj)
    assert response.status_code == 201, response.text
    assert field not in response.json()


def test_null_with_a_default_is_defaulted(client: httpx.Client) -> None:
    """The other half of kube's rule: a null in a defaulted field gets the default (cel_basic's map_list
    items default containerPort to 8080 and protocol to TCP)."""
    obj = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CELBasic",
        "metadata": {"name": "defaulted-nulls"},
        "value": 1,
        "map_list": [{"containerPort": None, "protocol": "UDP"}],
    }
    response = client.post(CELBASICS, json=obj)
    assert response.status_code == 201, response.text
    assert response.json()["map_list"] == [{"containerPort": 8080, "protocol": "UDP"}]
