"""One judgement for a CRD, whether `apiforge generate` reads it from a file or a running server is sent it:
the same CRDs pass, and the same are refused with kube's field path and message (apiextensions-apiserver
pkg/apis/apiextensions/validation/validation.go)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from builtin.admissionregistration.strategy import webhook_causes
from builtin.apiextensions.judge import judge
from builtin.apiextensions.strategy import CustomResourceDefinitionStrategy
from generator.check import check_definitions
from generator.definition import DefinitionErrors
from generator.load import load_text

FILE = Path("crd.yaml")


def crd(group: str = "example.com", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    document: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }
    if annotations is not None:
        document["metadata"]["annotations"] = annotations
    return document


def generate_errors(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(field path, message) of each error `apiforge generate` reports for the CRD file."""
    try:
        loaded = load_text(yaml.safe_dump(document), FILE)
        check_definitions(loaded.definitions, loaded.sources)
    except DefinitionErrors as found:
        return [(e.field_path, e.message) for e in found.errors]
    return []


def run_time_errors(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(cause.field, cause.message) for cause in judge(document)[1]]


UNAPPROVED = (
    'protected groups must have approval annotation "api-approved.kubernetes.io", '
    "see https://github.com/kubernetes/enhancements/pull/1111"
)
ANNOTATION = "api-approved.kubernetes.io"
# (group, annotation value or None, kube's message or "" when valid); apihelpers.GetAPIApprovalState
PROTECTED_GROUPS = [
    ("example.com", None, ""),
    ("k8s.io.example.com", None, ""),
    ("notk8s.io", None, ""),
    ("x.k8s.io", None, f"Required value: {UNAPPROVED}"),
    ("k8s.io", None, f"Required value: {UNAPPROVED}"),
    ("policy.kubernetes.io", None, f"Required value: {UNAPPROVED}"),
    ("kubernetes.io", "", f"Required value: {UNAPPROVED}"),
    ("x.k8s.io", "https://github.com/kubernetes/enhancements/pull/1111", ""),
    ("x.k8s.io", "unapproved, experimental-only", ""),
    ("x.k8s.io", "unapproved", ""),
    (
        "x.k8s.io",
        "github.com/kubernetes/kubernetes/pull/1",
        'Invalid value: "github.com/kubernetes/kubernetes/pull/1": protected groups must have approval '
        'annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", '
        "see https://github.com/kubernetes/enhancements/pull/1111",
    ),
    (
        "x.k8s.io",
        "approved",
        'Invalid value: "approved": protected groups must have approval annotation '
        '"api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", '
        "see https://github.com/kubernetes/enhancements/pull/1111",
    ),
]


@pytest.mark.parametrize(("group", "value", "message"), PROTECTED_GROUPS)
def test_protected_groups_need_the_approval_annotation_at_generate_and_run_time(
    group: str, value: str | None, message: str
) -> None:
    document = crd(group, None if value is None else {ANNOTATION: value})
    expected = [(f"metadata.annotations[{ANNOTATION}]", message)] if message else []
    assert run_time_errors(document) == expected
    assert [m for _, m in generate_errors(document)] == [m for _, m in expected]


FORM = "; desired format: https://host[/path]"
# (url, kube's messages: ValidateWebhookURL in staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go)
WEBHOOK_URLS = [
    ("https://converter.example:8443/convert", []),
    ("https://converter.example/?", []),
    (
        "http://converter.example",
        [f"Invalid value: \"http\": 'https' is the only allowed URL scheme{FORM}"],
    ),
    (
        "converter.example/convert",
        [
            f"Invalid value: \"\": 'https' is the only allowed URL scheme{FORM}",
            f'Invalid value: "": host must be specified{FORM}',
        ],
    ),
    (
        "https://admin:s3cret@converter.example/",
        ['Invalid value: "admin:s3cret": user information is not permitted in the URL'],
    ),
    (
        "https://admin@converter.example/",
        ['Invalid value: "admin": user information is not permitted in the URL'],
    ),
    (
        "https://converter.example/convert#part",
        ['Invalid value: "part": fragments are not permitted in the URL'],
    ),
    (
        "https://converter.example/convert?a=b",
        ['Invalid value: "a=b": query parameters are not permitted in the URL'],
    ),
    (
        "https://u:p@converter.example/?a=b#c",
        [
            'Invalid value: "u:p": user information is not permitted in the URL',
            'Invalid value: "c": fragments are not permitted in the URL',
            'Invalid value: "a=b": query parameters are not permitted in the URL',
        ],
    ),
    (
        "https://converter.example:https/",
        [
            'Required value: url must be a valid URL: parse "https://converter.example:https/": '
            f'invalid port ":https" after host{FORM}'
        ],
    ),
]


@pytest.mark.parametrize(("url", "messages"), WEBHOOK_URLS)
def test_conversion_webhook_urls_are_judged_as_kube_judges_them(
    url: str, messages: list[str]
) -> None:
    document = crd()
    document["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": url}},
    }
    field = "spec.conversion.webhookClientConfig.url"
    assert run_time_errors(document) == [(field, message) for message in messages]


@pytest.mark.parametrize(("url", "messages"), WEBHOOK_URLS)
def test_admission_webhook_urls_are_judged_as_kube_judges_them(
    url: str, messages: list[str]
) -> None:
    configuration = {
        "webhooks": [
            {
                "name": "deny.policy.example.com",
                "clientConfig": {"url": url},
                "admissionReviewVersions": ["v1"],
            }
        ]
    }
    field = "webhooks[0].clientConfig.url"
    assert [(c.field, c.message) for c in webhook_causes(configuration)] == [
        (field, message) for message in messages
    ]


@pytest.mark.parametrize(
    ("url", "errors"),
    [
        ("https://converter.example/convert", []),
        (
            "https://u@converter.example/",
            [
                (
                    "spec.conversion.webhookClientConfig.url",
                    'Invalid value: "u": user information is not permitted in the URL',
                )
            ],
        ),
    ],
)
def test_a_conversion_webhook_is_judged_alike_by_generate_and_run_time(
    url: str, errors: list[tuple[str, str]]
) -> None:
    document = crd()
    document["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": url}},
    }
    assert run_time_errors(document) == errors
    assert generate_errors(document) == errors


# (annotation before, annotation after, whether the update is refused): kube's validateAPIApproval never
# fails an update that leaves the approval state as it was
APPROVAL_UPDATES = [
    (None, None, False),
    ("approved", "also not a url", False),
    ("https://github.com/kubernetes/enhancements/pull/1111", None, True),
    (None, "not a url", True),
    (None, "unapproved, testing", False),
]


@pytest.mark.parametrize(("before", "after", "refused"), APPROVAL_UPDATES)
def test_an_update_keeping_the_approval_state_is_never_refused_for_it(
    before: str | None, after: str | None, refused: bool
) -> None:
    strategy = CustomResourceDefinitionStrategy()
    old = crd("x.k8s.io", None if before is None else {ANNOTATION: before})
    new = crd("x.k8s.io", None if after is None else {ANNOTATION: after})
    fields = [cause.field for cause in strategy.validate_update(new, old)]
    assert fields == ([f"metadata.annotations[{ANNOTATION}]"] if refused else [])
