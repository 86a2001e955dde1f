"""RFC 6902 JSON patch and RFC 7386 merge patch conformance, proved through PATCH on a real server.

The suites' documents are arbitrary JSON, so a temporary project adds a kind whose ``spec.doc`` keeps anything
(compact type ``any``, i.e. ``x-kubernetes-preserve-unknown-fields`` without a type: objects, arrays, strings,
numbers, booleans, and nulls below it survive a round trip). Every case gets its own object with
``spec.doc = doc``; the case's patch is sent re-addressed to ``/spec/doc`` and the stored ``spec.doc`` must then
equal ``expected``. A failing case must be answered with kube-apiserver's Status and leave the object as it was.

Sources: json-patch/tests.json and spec_tests.json (json-patch-tests, SOURCES.md §1) and the RFC 7386 examples
in merge-patch/ (§2). kube-apiserver's answers (k8s.io/apiserver pkg/endpoints/handlers/patch.go):

* JSON patch: a body that is not a list of operation objects fails ``jsonpatch.DecodePatch`` and is a 400
  BadRequest; more than 10,000 operations is a 413; an operation that does not apply (failed ``test``, missing
  path, bad index, unknown op) is ``NewGenericServerResponse(422, ...)``: reason Invalid, the generic message
  "the server rejected our request due to an error in our request" and the library's text as the only cause,
  of type UnexpectedServerResponse.
* Merge patch: a body that is not a JSON object fails to decode (``kjson.UnmarshalStrict`` into a map under the
  default fieldValidation, or ``jsonpatch.ErrBadJSONPatch`` for ``null``) and is a 400 BadRequest.

Where kube's library (gopkg.in/evanphx/json-patch.v4) is laxer than the RFC — negative and zero-padded array
indexes, operations without ``value`` — the server follows the RFC and the suite (apiserver/patch.py says so),
and the suite's answer is what is asserted: for those few error cases a real kube-apiserver would answer 200.

What cannot be expressed through an object, and how it is handled (counted in ``test_inventory``):

* Disabled suite records are skipped, as the suite asks (tests.json 10, 56, 85; spec_tests.json 13).
* A pointer that is not a pointer ("foo" without its leading slash, a missing or null ``path``/``from``) is
  sent unchanged: prefixing it with /spec/doc would turn "foo" into the valid pointer "/spec/docfoo" and hide
  the error the case is about. Every other pointer, including "" (the whole document), is prefixed.
* RFC 7386 Appendix A #11 (patch ``null``, result ``null``): the patch is nested as ``{"spec": {"doc": null}}``,
  and a null member of a merge patch *removes* the member, so the document cannot become a stored ``null``;
  the faithful observable result is that ``spec.doc`` is gone, which is what is asserted. Every other non-object
  patch (an array, a string) nested under ``spec.doc`` replaces the document, exactly as at the RFC's root.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from generator.pipeline import GenerateConfig, generate
from tests.serverproc import FIXTURES, ServerProcess, free_port

DOCUMENTS: Final = "/apis/conformance.example.com/v1/namespaces/default/documents"
JSON_PATCH: Final = "application/json-patch+json"
MERGE_PATCH: Final = "application/merge-patch+json"
INVALID_PATCH_MESSAGE: Final = "the server rejected our request due to an error in our request"
DOCUMENT_DEFINITION: Final = """\
group: conformance.example.com
kind: Document
versions:
  v1:
    storage: true
    schema:
      spec:
        doc: any
"""
ABSENT: Final = object()  # the expected document of a merge patch that removes spec.doc


@dataclass(frozen=True)
class PatchCase:
    id: str
    content_type: str
    doc: Any
    body: Any  # the patch as sent: re-addressed to spec.doc
    expected: Any  # the expected spec.doc; ABSENT when it is removed; None with error=True
    error: bool
    comment: str


def under_doc(pointer: Any) -> Any:
    """A pointer into the case's document as a pointer into the object; non-pointers are left alone."""
    if isinstance(pointer, str) and (pointer == "" or pointer.startswith("/")):
        return "/spec/doc" + pointer
    return pointer


def json_patch_cases() -> tuple[list[PatchCase], list[str]]:
    """The enabled records of both suite files, and the ids of the disabled ones."""
    cases: list[PatchCase] = []
    disabled: list[str] = []
    for stem in ("tests", "spec_tests"):
        records = json.loads((FIXTURES / "json-patch" / f"{stem}.json").read_text())
        for index, record in enumerate(records):
            case_id = f"{stem}-{index}"
            if record.get("disabled"):
                disabled.append(case_id)
                continue
            ops = []
            for op in record["patch"]:
                moved = dict(op)
                for key in ("path", "from"):
                    if key in moved:
                        moved[key] = under_doc(moved[key])
                ops.append(moved)
            cases.append(
                PatchCase(
                    case_id,
                    JSON_PATCH,
                    record["doc"],
                    ops,
                    record.get("expected"),
                    "error" in record,
                    str(record.get("comment") or record.get("error") or ""),
                )
            )
    return cases, disabled


def merge_patch_cases() -> list[PatchCase]:
    cases: list[PatchCase] = []
    for stem in ("rfc7386_appendix_a", "rfc7386_body_examples"):
        records = json.loads((FIXTURES / "merge-patch" / f"{stem}.json").read_text())
        for index, record in enumerate(records):
            # a null member removes spec.doc (see the module docstring: Appendix A #11)
            expected = ABSENT if record["patch"] is None else record["result"]
            cases.append(
                PatchCase(
                    f"{stem}-{index}",
                    MERGE_PATCH,
                    record["original"],
                    {"spec": {"doc": record["patch"]}},
                    expected,
                    False,
                    str(record.get("section", "")),
                )
            )
    return cases


JSON_PATCH_CASES, DISABLED = json_patch_cases()
MERGE_PATCH_CASES = merge_patch_cases()
ALL_CASES = JSON_PATCH_CASES + MERGE_PATCH_CASES


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), but booleans are not numbers (Python has True == 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def document(name: str, doc: Any) -> dict[str, Any]:
    return {
        "apiVersion": "conformance.example.com/v1",
        "kind": "Document",
        "metadata": {"name": name},
        "spec": {"doc": doc},
    }


def object_name(case_id: str) -> str:
    return case_id.lower().replace("_", "-")


def assert_status(response: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    assert response.status_code == code, response.text
    status: dict[str, Any] = response.json()
    assert (status["kind"], status["apiVersion"], status["status"]) == ("Status", "v1", "Failure")
    assert (status["code"], status["reason"]) == (code, reason)
    return status


# -- the server ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Document kind, beside the built-in kinds every project gets (namespaces: "default" exists)."""
    root = tmp_path_factory.mktemp("patch-project")
    (root / "definitions" / "conformance.example.com").mkdir(parents=True)
    (root / "definitions" / "conformance.example.com" / "document.yaml").write_text(
        DOCUMENT_DEFINITION
    )
    generate(GenerateConfig(root / "definitions", root / "generated"))
    return root


@pytest.fixture(scope="module")
def server(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Overrides conftest's server: this module's server runs from the temporary project (whose generated
    package shadows the repository's), and conftest's ``client`` talks to it."""
    process = ServerProcess(tmp_path_factory.mktemp("data"), free_port(), cwd=project)
    process.start()
    yield process
    process.stop()


@dataclass(frozen=True)
class Outcome:
    created: dict[str, Any]
    response: httpx.Response
    after: dict[str, Any]  # the object read back after the PATCH


@pytest.fixture(scope="module")
def outcomes(client: httpx.Client) -> dict[str, Outcome]:
    """Every case run once, in one batch over one connection: create all objects, then patch each and read
    it back."""
    created: dict[str, dict[str, Any]] = {}
    for case in ALL_CASES:
        response = client.post(DOCUMENTS, json=document(object_name(case.id), case.doc))
        assert response.status_code == 201, f"{case.id}: {response.text}"
        created[case.id] = response.json()
        assert same_json(created[case.id]["spec"]["doc"], case.doc), f"{case.id} did not round-trip"
    results: dict[str, Outcome] = {}
    for case in ALL_CASES:
        url = f"{DOCUMENTS}/{object_name(case.id)}"
        response = client.patch(
            url, content=json.dumps(case.body), headers={"content-type": case.content_type}
        )
        results[case.id] = Outcome(created[case.id], response, client.get(url).json())
    return results


# -- the suites ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda case: case.id)
def test_patch_case(case: PatchCase, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[case.id]
    if case.error:
        status = assert_status(outcome.response, 422, "Invalid")
        assert status["message"] == INVALID_PATCH_MESSAGE
        causes = status["details"]["causes"]
        assert [c["reason"] for c in causes] == ["UnexpectedServerResponse"] and causes[0][
            "message"
        ]
        assert outcome.after == outcome.created, "a failed patch changed the object"
        return
    assert outcome.response.status_code == 200, f"{case.comment}: {outcome.response.text}"
    patched = outcome.response.json()
    assert patched == outcome.after  # the answer is what was stored
    if case.expected is ABSENT:
        assert "doc" not in patched["spec"], patched["spec"]
    else:
        assert same_json(patched["spec"]["doc"], case.expected), (
            f"{case.comment}: got {patched['spec']['doc']!r}, expected {case.expected!r}"
        )


def test_inventory() -> None:
    """Every record of the suites is run, or skipped because the suite disables it: none is dropped."""
    records = {
        stem: len(json.loads((FIXTURES / "json-patch" / f"{stem}.json").read_text()))
        for stem in ("tests", "spec_tests")
    }
    assert len(JSON_PATCH_CASES) + len(DISABLED) == sum(records.values()) == 95 + 17
    assert DISABLED == ["tests-10", "tests-56", "tests-85", "spec_tests-13"]
    # 31 + 5 error records, of which tests-85 and spec_tests-13 are disabled
    assert sum(case.error for case in JSON_PATCH_CASES) == 34
    assert len(JSON_PATCH_CASES) == 108
    assert len(MERGE_PATCH_CASES) == 15 + 2
    assert [case.id for case in MERGE_PATCH_CASES if case.expected is ABSENT] == [
        "rfc7386_appendix_a-10"
    ]


# -- bodies kube refuses before applying anything ----------------------------------------------------


@pytest.fixture(scope="module")
def target(client: httpx.Client) -> str:
    response = client.post(DOCUMENTS, json=document("target", {"a": [1, {"b": None}]}))
    assert response.status_code == 201, response.text
    return f"{DOCUMENTS}/target"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (JSON_PATCH, b"{not json"),
        (JSON_PATCH, b'{"op": "add", "path": "/spec/doc", "value": 1}'),  # an operation, not a list
        (JSON_PATCH, b'"add"'),
        (JSON_PATCH, b"[1]"),
        (JSON_PATCH, b'[["add", "/spec/doc", 1]]'),
        (MERGE_PATCH, b"{not json"),
        (MERGE_PATCH, b"null"),
        (MERGE_PATCH, b'"bar"'),
        (MERGE_PATCH, b"[1]"),
        (MERGE_PATCH, b"3"),
    ],
)
def test_undecodable_patch_is_400(
    client: httpx.Client, target: str, content_type: str, body: bytes
) -> None:
    before = client.get(target).json()
    response = client.patch(target, content=body, headers={"content-type": content_type})
    assert_status(response, 400, "BadRequest")
    assert client.get(target).json() == before


def test_too_many_operations_is_413(client: httpx.Client, target: str) -> None:
    before = client.get(target).json()
    ops = [{"op": "test", "path": "/spec/doc/a/0", "value": 1}] * 10001
    response = client.patch(target, content=json.dumps(ops), headers={"content-type": JSON_PATCH})
    status = assert_status(response, 413, "RequestEntityTooLarge")
    assert "10000" in status["message"]
    assert client.get(target).json() == before


def test_empty_and_null_json_patches_change_nothing(client: httpx.Client, target: str) -> None:
    """``[]`` and ``null`` decode to an empty patch: kube answers 200 with the object unchanged, without a
    new resourceVersion."""
    before = client.get(target).json()
    for body in (b"[]", b"null"):
        response = client.patch(target, content=body, headers={"content-type": JSON_PATCH})
        assert response.status_code == 200, response.text
        assert response.json() == before
