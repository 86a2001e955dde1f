"""Kubernetes' ``format`` CEL library (apiserver/schema/celformat.py) on kube's own cases
(k8s.io/apiserver/pkg/cel/library/format_test.go TestFormat), evaluated by cel-rust with the libraries
registered as rules and policies have them; then in an x-kubernetes-validations rule and message
expression, and in a ValidatingAdmissionPolicy."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from apiserver.schema import celformat
from apiserver.schema.cel import validate_rules
from apiserver.schema.cellibs import LIBRARIES
from builtin.admissionregistration.compiled import compile_policy

LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NONE = "none"

KUBE_CASES = [
    ('format.dns1123Label().validate("my-label-name")', NONE),
    ('format.dns1123Subdomain().validate("apiextensions.k8s.io")', NONE),
    ('format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', NONE),
    ('format.dns1123LabelPrefix().validate("my-label-prefix-")', NONE),
    ('format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', NONE),
    ('format.dns1035LabelPrefix().validate("my-label-prefix-")', NONE),
    ('format.uri().validate("http://example.com")', NONE),
    ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', NONE),
    ('format.byte().validate("aGVsbG8=")', NONE),
    ('format.date().validate("2021-01-01")', NONE),
    ('format.datetime().validate("2021-01-01T00:00:00Z")', NONE),
    ('format.dns1123Label().validate("contains a space")', [LABEL]),
    ('format.dns1123Subdomain().validate("contains a space")', [SUBDOMAIN]),
    ('format.dns1035Label().validate("contains a space")', [DNS1035]),
    ('format.qualifiedName().validate("contains a space")', [QUALIFIED]),
    ('format.dns1123LabelPrefix().validate("contains a space-")', [LABEL]),
    ('format.dns1123SubdomainPrefix().validate("contains a space-")', [SUBDOMAIN]),
    ('format.dns1035LabelPrefix().validate("contains a space-")', [DNS1035]),
    ('format.dns1123Subdomain().validate("example.com")', NONE),
    ('format.dns1035Label().validate("my-label-name")', NONE),
    ('format.qualifiedName().validate("my.name")', NONE),
    ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
    ('format.date().validate("2020-01-32")', ["invalid date"]),
    ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
    ('format.named("unknown").hasValue()', False),
    ('format.labelValue().validate("my-cool-label-Value")', NONE),
    ('format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")', [LABEL_VALUE]),
]


def evaluate(expression: str) -> Any:
    context = cel.Context()
    for name, function in LIBRARIES.items():
        context.add_function(name, function)
    context.add_variable(celformat.VARIABLE, celformat.ROOT)
    return cel.compile(expression).execute(context)


@pytest.mark.parametrize(("expression", "expected"), KUBE_CASES)
def test_kubes_cases(expression: str, expected: Any) -> None:
    result = evaluate(expression)
    if expected is NONE:
        assert isinstance(result, cel.OptionalValue) and not result.has_value()
    elif isinstance(expected, list):
        assert isinstance(result, cel.OptionalValue) and result.value() == expected
    else:
        assert result is expected


@pytest.mark.parametrize("name", sorted(celformat.CHECKS))
def test_every_format_is_named_and_equal_only_to_itself(name: str) -> None:
    """kube's "lookup and comparison" cases over ConstantFormats."""
    assert evaluate(f'format.named("{name}").hasValue()') is True
    assert evaluate(f'format.named("{name}").value() == format.{name}()') is True
    other = "uuid" if name != "uuid" else "uri"
    assert evaluate(f"format.{name}() == format.{other}()") is False


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", 'parse "": empty url'),
        ("example.com", 'parse "example.com": invalid URI for request'),
        ("http://host:port/", 'parse "http://host:port/": invalid port ":port" after host'),
        ("/a%zz", 'parse "/a%zz": invalid URL escape "%zz"'),
        ("mailto:someone@example.com", None),
        ("/absolute/path?q=1", None),
        ("http://[::1]:8080/x", None),
    ],
)
def test_uri_reports_what_go_url_parse_request_uri_does(text: str, error: str | None) -> None:
    assert celformat.CHECKS["uri"](text) == ([] if error is None else [error])


def test_a_crd_rule_and_its_message_expression() -> None:
    schema = {
        "type": "object",
        "properties": {
            "host": {
                "type": "string",
                "maxLength": 253,
                "x-kubernetes-validations": [
                    {
                        "rule": "!format.dns1123Label().validate(self).hasValue()",
                        "messageExpression": "format.dns1123Label().validate(self).value().join('; ')",
                    }
                ],
            }
        },
    }
    assert validate_rules({"host": "my-host"}, None, schema, []) == []
    (cause,) = validate_rules({"host": "My.Host"}, None, schema, [])
    assert (cause.field, cause.message) == ("host", f'Invalid value: "My.Host": {LABEL}')


def test_a_policy_validation_with_a_named_format() -> None:
    compiled = compile_policy(
        {
            "metadata": {"name": "p"},
            "spec": {
                "validations": [
                    {
                        "expression": "!format.named('dns1035Label').value()"
                        ".validate(object.metadata.name).hasValue()",
                        "messageExpression": "format.dns1035Label().validate(object.metadata.name)"
                        ".value()[0]",
                    }
                ]
            },
        }
    )
    for name, messages in (("web-1", []), ("1-web", [DNS1035])):
        bound = compiled.bind(compiled.project({"object": {"metadata": {"name": name}}}))
        assert [f.message for f in compiled.failures(bound)] == messages
