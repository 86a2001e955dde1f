"""A posted CRD is judged by the generator's CRD rules, answered with kube's field paths and reasons."""

from __future__ import annotations

import copy
from typing import Any

from builtin.apiextensions.judge import judge
from builtin.apiextensions.resource import resource_type

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"size": {"type": "integer", "default": 1, "maximum": 10}},
        }
    },
}
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA}}
        ],
    },
}


def test_a_valid_crd_becomes_a_resource_that_defaults_and_validates() -> None:
    definition, causes = judge(CRD)
    assert causes == [] and definition is not None
    resource = resource_type(definition)
    assert (resource.group, resource.plural, resource.namespaced) == (
        "example.com",
        "widgets",
        True,
    )
    version = resource.storage_version
    obj: dict[str, Any] = {"spec": {}}
    assert version.defaulter is not None and version.validator is not None
    version.defaulter(obj)
    assert obj == {"spec": {"size": 1}}
    assert [c.field for c in version.validator({"spec": {"size": 11}})] == ["spec.size"]


def test_an_unknown_type_is_kubes_not_supported_at_spec_validation() -> None:
    crd = copy.deepcopy(CRD)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"] = "strign"
    _, causes = judge(crd)
    assert [(c.reason, c.field) for c in causes] == [
        ("FieldValueNotSupported", "spec.validation.openAPIV3Schema.properties[spec].type")
    ]
    assert causes[0].message.startswith('Unsupported value: "strign": supported values: "array"')


def test_versions_with_different_schemas_are_reported_per_version() -> None:
    crd = copy.deepcopy(CRD)
    second = copy.deepcopy(crd["spec"]["versions"][0])
    second.update(name="v2", storage=False)
    second["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["type"] = "nope"
    crd["spec"]["versions"].append(second)
    definition, causes = judge(crd)
    assert definition is None
    assert causes[0].field == (
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[size].type"
    )


def test_a_multi_version_crd_need_not_convert_totally_at_run_time() -> None:
    crd = copy.deepcopy(CRD)
    second = copy.deepcopy(crd["spec"]["versions"][0])
    second.update(name="v2", storage=False)
    second["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["other"] = {
        "type": "string"
    }
    crd["spec"]["versions"].append(second)
    assert judge(crd)[1] == []


def test_a_conversion_webhook_is_judged_as_kube_judges_it() -> None:
    """kube's ValidateCustomResourceConversion, at its internal type's paths."""
    crd = copy.deepcopy(CRD)
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v2"]},
    }
    _, causes = judge(crd)
    assert [(c.field, c.message) for c in causes] == [
        (
            "spec.conversion.conversionReviewVersions",
            'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
        ),
        (
            "spec.conversion.webhookClientConfig",
            "Required value: required when strategy is set to Webhook",
        ),
    ]
    crd["spec"]["conversion"]["webhook"] = {
        "conversionReviewVersions": ["v1beta1", "v1"],
        "clientConfig": {"url": "http://insecure.example"},
    }
    assert [(c.field, c.message) for c in judge(crd)[1]] == [
        (
            "spec.conversion.webhookClientConfig.url",
            "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: "
            "https://host[/path]",
        )
    ]
    crd["spec"]["conversion"]["webhook"]["clientConfig"] = {
        "service": {"namespace": "default", "name": "converter"}
    }
    assert judge(crd)[1] == []
