"""CEL that kube's type checker refuses, refused when written through a real server with kube's answer: a
CRD rule or message expression, a ValidatingAdmissionPolicy expression and a webhook's match condition
naming an undeclared variable or function (cel-go's ``undeclared reference to 'bar' (in container '')``),
a rule that is no bool and a message expression that is no string
(k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go and
k8s.io/apiserver/pkg/admission/plugin/cel/compile.go), and a rule over its cost limit (kube's
``field.Forbidden``). The texts are kube-apiserver v1.34.4's answers to the same requests (the oracle)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
SPEC = "spec.validation.openAPIV3Schema.properties[spec]"
NO_RULE = '"Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null'


def _crd(name: str, rule: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "type": "object",
        "properties": {"foo": {"type": "string", "maxLength": 8}},
        "x-kubernetes-validations": [rule],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{name}s.refs.example.com"},
        "spec": {
            "group": "refs.example.com",
            "names": {"kind": name.capitalize(), "plural": f"{name}s"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


def _error(source: str, column: int, name: str) -> str:
    return (
        f"ERROR: <input>:1:{column + 1}: undeclared reference to '{name}' (in container '')\n"
        f" | {source}\n | {'.' * column}^"
    )


def _refused(response: httpx.Response) -> list[tuple[str, str, str]]:
    assert response.status_code == 422, response.text
    return [(c["reason"], c["field"], c["message"]) for c in response.json()["details"]["causes"]]


@pytest.mark.parametrize(
    ("name", "rule", "key", "expected"),
    [
        (
            "ident",
            {"rule": "self.foo == bar"},
            "rule",
            '{"Rule":"self.foo == bar",'
            + NO_RULE
            + "}: compilation failed: "
            + _error("self.foo == bar", 12, "bar"),
        ),
        (
            "function",
            {"rule": "nosuch(self)"},
            "rule",
            '{"Rule":"nosuch(self)",'
            + NO_RULE
            + "}: compilation failed: "
            + _error("nosuch(self)", 6, "nosuch"),
        ),
        (
            "message",
            {"rule": "has(self.foo)", "messageExpression": "'foo is ' + nope"},
            "messageExpression",
            '{"Rule":"has(self.foo)","Message":"","MessageExpression":"\'foo is \' + nope",'
            '"Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression compilation'
            " failed: " + _error("'foo is ' + nope", 12, "nope"),
        ),
        (
            "notbool",
            {"rule": "self.foo"},
            "rule",
            '{"Rule":"self.foo",' + NO_RULE + "}: cel expression must evaluate to a bool",
        ),
        (
            "notstring",
            {"rule": "has(self.foo)", "messageExpression": "self.foo.size()"},
            "messageExpression",
            '{"Rule":"has(self.foo)","Message":"","MessageExpression":"self.foo.size()",'
            '"Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate'
            " to a string",
        ),
    ],
)
def test_a_crd_rule_kubes_checker_refuses_is_refused(
    client: httpx.Client, name: str, rule: dict[str, Any], key: str, expected: str
) -> None:
    response = client.post(CRDS, json=_crd(name, rule))
    field = f"{SPEC}.x-kubernetes-validations[0].{key}"
    assert _refused(response) == [("FieldValueInvalid", field, f"Invalid value: {expected}")]
    assert response.json()["message"] == (
        f'CustomResourceDefinition.apiextensions.k8s.io "{name}s.refs.example.com" is invalid:'
        f" {field}: Invalid value: {expected}"
    )


def test_a_crd_rule_over_its_cost_limit_is_forbidden(client: httpx.Client) -> None:
    """kube's validation.go reports the cost with field.Forbidden; the rule of the crd-cel scenario."""
    crd = _crd("costly", {"rule": "self.foo == 'a'"})
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["text"] = {
        "type": "string",
        "maxLength": 32,
        "x-kubernetes-validations": [
            {
                "rule": "self.replace('_', '-').split('-').join('-') == self.replace('_', '-')",
                "message": "strings: split, join",
            }
        ],
    }
    advice = (
        " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays,"
        " maps, and strings are declared)"
    )
    rule = f"{SPEC}.properties[text].x-kubernetes-validations[0].rule"
    assert _refused(client.post(CRDS, json=crd)) == [
        (
            "FieldValueForbidden",
            rule,
            f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x{advice}",
        ),
        (
            "FieldValueForbidden",
            rule,
            "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire"
            " OpenAPIv3 schema",
        ),
        (
            "FieldValueForbidden",
            "spec.validation.openAPIV3Schema",
            "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3"
            f" schema exceeds budget by factor of more than 100x{advice}",
        ),
    ]


LONG_FORMAT = "'" + "a" * 200 + "%d'"


@pytest.mark.parametrize(
    ("name", "rule", "factor"),
    [
        # cel-go sizes strings.quote's result (twice the string, plus the quotes): a comparison with it is
        # bounded, and kube 1.34 accepts this rule on an unbounded string
        ("quoted", "strings.quote(self.foo) != '%s'.format([self.foo])", None),
        # format traverses its format string: 400,000 items times 35 is 1.4 times the limit
        ("formatted", f"self.l.all(x, {LONG_FORMAT}.format([x]) != '')", "1.400000x"),
    ],
)
def test_string_extension_costs_are_cel_gos(
    client: httpx.Client, name: str, rule: str, factor: str | None
) -> None:
    """The static costs of the strings extension's quote and format (cel-go's checker/cost.go, the
    version kube 1.34 vendors); the verdicts are kube-apiserver v1.34.4's."""
    crd = _crd(name, {"rule": rule})
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["foo"] = {"type": "string"}
    spec["properties"]["l"] = {"type": "array", "maxItems": 400_000, "items": {"type": "integer"}}
    response = client.post(CRDS, json=crd)
    if factor is None:
        assert response.status_code == 201, response.text
        return
    advice = (
        " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays,"
        " maps, and strings are declared)"
    )
    assert _refused(response) == [
        (
            "FieldValueForbidden",
            f"{SPEC}.x-kubernetes-validations[0].rule",
            f"Forbidden: estimated rule cost exceeds budget by factor of {factor}{advice}",
        )
    ]


RULES = [
    {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["configmaps"],
    }
]


def _policy(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"matchConstraints": {"resourceRules": RULES}, **spec},
    }


def _undefined(source: str, column: int, name: str) -> str:
    return (
        f"ERROR: <input>:1:{column + 1}: undefined field '{name}'\n | {source}\n | {'.' * column}^"
    )


PARAMS = {"apiVersion": "v1", "kind": "ConfigMap"}
# (policy, the refused expressions' fields and cel-go errors), as kube-apiserver v1.34.4 answered: params
# exist with a paramKind, variables when the policy has some (in a variable's expression, those before it;
# never in match conditions), and self or an unknown function never
POLICIES: list[tuple[dict[str, Any], list[tuple[str, str, str]]]] = [
    (
        _policy(
            "no-params-no-variables",
            validations=[
                {"expression": "object.data.size() < params.max && variables.ok"},
                {"expression": "self.data.size() < 3"},
                {"expression": "has(object.data)", "messageExpression": "nosuch(object)"},
            ],
        ),
        [
            (
                "spec.validations[0].expression",
                "object.data.size() < params.max && variables.ok",
                _error("object.data.size() < params.max && variables.ok", 21, "params")
                + "\n"
                + _error("object.data.size() < params.max && variables.ok", 35, "variables"),
            ),
            (
                "spec.validations[1].expression",
                "self.data.size() < 3",
                _error("self.data.size() < 3", 0, "self"),
            ),
            (
                "spec.validations[2].messageExpression",
                "nosuch(object)",
                _error("nosuch(object)", 6, "nosuch"),
            ),
        ],
    ),
    (
        _policy(
            "declared",
            paramKind=PARAMS,
            variables=[{"name": "a", "expression": "true"}],
            matchConditions=[{"name": "m", "expression": "params != null"}],
            validations=[
                {
                    "expression": "variables.a && params.data.size() > 0 && namespaceObject == null"
                    " && authorizer.group('').resource('x').check('get').allowed()"
                    " && request.name != ''"
                }
            ],
        ),
        [],
    ),
    (
        _policy(
            "unknown-variable",
            variables=[{"name": "ok", "expression": "true"}],
            validations=[{"expression": "variables.ok && variables.nope"}],
        ),
        [
            (
                "spec.validations[0].expression",
                "variables.ok && variables.nope",
                _undefined("variables.ok && variables.nope", 25, "nope"),
            )
        ],
    ),
    (
        _policy(
            "match-conditions",
            variables=[{"name": "ok", "expression": "true"}],
            matchConditions=[{"name": "m", "expression": "variables.ok"}],
            validations=[{"expression": "true"}],
        ),
        [
            (
                "spec.matchConditions[0].expression",
                "variables.ok",
                _error("variables.ok", 0, "variables"),
            )
        ],
    ),
    (
        _policy(
            "later-variable",
            variables=[
                {"name": "a", "expression": "variables.b"},
                {"name": "b", "expression": "params.x"},
            ],
            validations=[{"expression": "true"}],
        ),
        [
            ("spec.variables[0].expression", "variables.b", _undefined("variables.b", 9, "b")),
            ("spec.variables[1].expression", "params.x", _error("params.x", 0, "params")),
        ],
    ),
]


@pytest.mark.parametrize(
    ("policy", "refused"), POLICIES, ids=[p["metadata"]["name"] for p, _ in POLICIES]
)
def test_a_policy_expression_naming_what_is_undeclared_is_refused(
    client: httpx.Client, policy: dict[str, Any], refused: list[tuple[str, str, str]]
) -> None:
    """kube's ValidatingAdmissionPolicy validation: field.Invalid of the expression with the checker's
    errors, in the environment kube compiles that expression in."""
    response = client.post(f"{ADMISSION}/validatingadmissionpolicies", json=policy)
    if not refused:
        assert response.status_code == 201, response.text
        return
    assert _refused(response) == [
        (
            "FieldValueInvalid",
            field,
            f'Invalid value: "{source}": compilation failed: {error}',
        )
        for field, source, error in refused
    ]


def test_a_webhook_match_condition_has_no_params(client: httpx.Client) -> None:
    """A webhook's match conditions declare object, oldObject, request and authorizer only."""
    webhook = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "undeclared"},
        "webhooks": [
            {
                "name": "undeclared.refs.example.com",
                "clientConfig": {"url": "https://hook.example.com/"},
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "rules": RULES,
                "matchConditions": [
                    {"name": "fine", "expression": "request.userInfo.username != 'x'"},
                    {"name": "params", "expression": "params.x == 1"},
                ],
            }
        ],
    }
    response = client.post(f"{ADMISSION}/validatingwebhookconfigurations", json=webhook)
    assert _refused(response) == [
        (
            "FieldValueInvalid",
            "webhooks[0].matchConditions[1].expression",
            'Invalid value: "params.x == 1": compilation failed: '
            + _error("params.x == 1", 0, "params"),
        )
    ]
