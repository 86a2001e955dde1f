"""Kubernetes' JSONPath (apiserver/machinery/jsonpath.py), table-driven from client-go's own tests:
staging/src/k8s.io/client-go/util/jsonpath/parser_test.go (TestParser, TestFailParser) and
jsonpath_test.go (TestTypesInput, TestStructInput, TestJSONInput, TestKubernetes), the cases that apply to
JSON data and to one action (a printer column's path)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apiserver.machinery.jsonpath import (
    Array,
    Bool,
    Field,
    Filter,
    Identifier,
    JSONPathError,
    ListNode,
    Number,
    Param,
    Recursive,
    Text,
    Union,
    Wildcard,
    find,
    parse,
)

UNKNOWN = Param(False, 0)


def arr(start: Param, end: Param, step: Param = UNKNOWN) -> Array:
    return Array((start, end, step))


def known(value: int, derived: bool = False) -> Param:
    return Param(True, value, derived)


def action(*nodes: Any) -> ListNode:
    return ListNode(list(nodes))


def osimage(text: str) -> Filter:
    path = action(Field("status"), Field("nodeInfo"), Field("osImage"))
    return Filter(path, action(Text(text)), "==")


# parser_test.go TestParser: each template and the nodes it parses to
PARSER_CASES = [
    ("plain", "hello jsonpath", [Text("hello jsonpath")]),
    ("variable", "hello {.jsonpath}", [Text("hello "), action(Field("jsonpath"))]),
    ("arrayfiled", "hello {['jsonpath']}", [Text("hello "), action(Field("jsonpath"))]),
    ("quote", '{"{"}', [action(Text("{"))]),
    ("array", "{[1:3]}", [action(arr(known(1), known(3)))]),
    (
        "allarray",
        "{.book[*].author}",
        [action(Field("book"), arr(UNKNOWN, UNKNOWN), Field("author"))],
    ),
    ("wildcard", "{.bicycle.*}", [action(Field("bicycle"), Wildcard())]),
    (
        "filter",
        "{[?(@.price<3)]}",
        [action(Filter(action(Field("price")), action(Number(3)), "<"))],
    ),
    ("recursive", "{..}", [action(Recursive())]),
    ("recurField", "{..price}", [action(Recursive(), Field("price"))]),
    ("arraydict", "{['book.price']}", [action(Field("book"), Field("price"))]),
    (
        "union",
        "{['bicycle.price', 3, 'book.price']}",
        [
            action(
                Union(
                    (
                        action(Field("bicycle"), Field("price")),
                        action(arr(known(3), known(4, derived=True))),
                        action(Field("book"), Field("price")),
                    )
                )
            )
        ],
    ),
    (
        "range",
        "{range .items}{.name},{end}",
        [
            action(Identifier("range"), Field("items")),
            action(Field("name")),
            Text(","),
            action(Identifier("end")),
        ],
    ),
    (
        "paired parentheses in quotes",
        '{[?(@.status.nodeInfo.osImage == "()")]}',
        [action(osimage("()"))],
    ),
    (
        "paired parentheses in double quotes and with double quotes escape",
        r'{[?(@.status.nodeInfo.osImage == "(\"\")")]}',
        [action(osimage('("")'))],
    ),
    (
        "unregular parentheses in double quotes",
        '{[?(@.test == "())(")]}',
        [action(Filter(action(Field("test")), action(Text("())(")), "=="))],
    ),
    (
        "plain text in single quotes",
        "{[?(@.status.nodeInfo.osImage == 'Linux')]}",
        [action(osimage("Linux"))],
    ),
    (
        "test filter suffix",
        '{[?(@.status.nodeInfo.osImage == "{[()]}")]}',
        [action(osimage("{[()]}"))],
    ),
    (
        "double inside single",
        """{[?(@.status.nodeInfo.osImage == "''")]}""",
        [action(osimage("''"))],
    ),
    (
        "single inside double",
        """{[?(@.status.nodeInfo.osImage == '""')]}""",
        [action(osimage('""'))],
    ),
    (
        "single containing escaped single",
        r"{[?(@.status.nodeInfo.osImage == '\\\'')]}",
        [action(osimage("\\'"))],
    ),
    (
        "negative index slice, equals a[len-5] to a[len-1]",
        "{[-5:]}",
        [action(arr(known(-5), UNKNOWN))],
    ),
    (
        "negative index slice, equals a[len-1]",
        "{[-1]}",
        [action(arr(known(-1), known(0, derived=True)))],
    ),
    (
        "negative index slice, equals a[1] to a[len-1]",
        "{[1:-1]}",
        [action(arr(known(1), known(-1)))],
    ),
    # beyond parser_test.go: the escaped dot of a label key, and booleans in filters
    (
        "escaped dot",
        r"{.metadata.labels.strimzi\.io/cluster}",
        [action(Field("metadata"), Field("labels"), Field("strimzi.io/cluster"))],
    ),
    ("bool", "{[?(@.ok==true)]}", [action(Filter(action(Field("ok")), action(Bool(True)), "=="))]),
]


@pytest.mark.parametrize(
    ("name", "template", "nodes"), PARSER_CASES, ids=[c[0] for c in PARSER_CASES]
)
def test_parser_gives_client_gos_nodes(name: str, template: str, nodes: list[Any]) -> None:
    assert parse(template).nodes == nodes


# parser_test.go TestFailParser (and "malformat input" of TestParser): the template and kube's error
FAIL_CASES = [
    ("unclosed action", "{.hello", "unclosed action"),
    ("unrecognized character", "{*}", "unrecognized character in action: U+002A '*'"),
    ("invalid number", "{+12.3.0}", "cannot parse number +12.3.0"),
    ("unterminated array", "{[1}", "unterminated array"),
    ("unterminated filter", "{[?(.price]}", "unterminated filter"),
    ("invalid multiple recursive descent", "{........}", "invalid multiple recursive descent"),
    ("malformat input", "{\\\\\\}", "unrecognized character in action: U+005C '\\'"),
    ("invalid array index", "{.a[x]}", "invalid array index x"),
    ("unclosed filter", "{[?(@.a==1)}", "unclosed array expect ]"),
    ("unterminated quote", "{'abc}", "unterminated quoted string"),
]


@pytest.mark.parametrize(
    ("name", "template", "message"), FAIL_CASES, ids=[c[0] for c in FAIL_CASES]
)
def test_parser_refuses_with_client_gos_message(name: str, template: str, message: str) -> None:
    with pytest.raises(JSONPathError) as refused:
        parse(template)
    assert str(refused.value) == message


TYPES = {
    "bools": [True, False, True, False],
    "integers": [1, 2, 3, 4],
    "floats": [1.0, 2.2, 3.3, 4.0],
    "strings": ["one", "two", "three", "four"],
    "interfaces": [True, "one", 1, 1.1],
    "maps": [
        {"name": "one", "value": 1},
        {"name": "two", "value": 2.02},
        {"name": "three", "value": 3.03},
        {"name": "four", "value": 4.04},
    ],
}
POINTS = json.loads(
    """[{"id": "i1", "x": 4, "y": -5}, {"id": "i2", "x": -2, "y": -5, "z": 1},
        {"id": "i3", "x": 8, "y": 3}, {"id": "i4", "x": -6, "y": -1},
        {"id": "i5", "x": 0, "y": 2, "z": 1}, {"id": "i6", "x": 1, "y": 4}]"""
)
NODES = {
    "kind": "List",
    "items": [
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
            "status": {
                "capacity": {"cpu": "4"},
                "ready": True,
                "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}],
            },
        },
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
            "status": {
                "capacity": {"cpu": "8"},
                "ready": False,
                "addresses": [
                    {"type": "LegacyHostIP", "address": "127.0.0.2"},
                    {"type": "another", "address": "127.0.0.3"},
                ],
            },
        },
    ],
    "users": [
        {"name": "myself", "user": {}},
        {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
    ],
}
LABELS = {
    "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
    "Employees": {"jason": "manager"},
}

# jsonpath_test.go: a path (as a printer column names it), its input, and what it selects
FIND_CASES = [
    ("boolSliceIndex", ".bools[0]", TYPES, [True]),
    ("boolSliceIndexReverse", ".bools[-1]", TYPES, [False]),
    ("boolSubSlice", ".bools[0:2]", TYPES, [True, False]),
    ("boolSubSliceFirst2", ".bools[:2]", TYPES, [True, False]),
    ("boolSubSliceStep2", ".bools[:4:2]", TYPES, [True, True]),
    ("integerSliceIndexReverse", ".integers[-2]", TYPES, [3]),
    ("integerSubSliceStep2", ".integers[:4:2]", TYPES, [1, 3]),
    ("floatSliceIndexReverse", ".floats[-2]", TYPES, [3.3]),
    ("stringSubSliceStep2", ".strings[:4:2]", TYPES, ["one", "three"]),
    ("interfaceSubSliceFirst2", ".interfaces[0:2]", TYPES, [True, "one"]),
    ("mapSliceIndex", ".maps[0]", TYPES, [{"name": "one", "value": 1}]),
    ("mapSubSliceStepOdd", ".maps[::2].name", TYPES, ["one", "three"]),
    ("mapSubSliceStepEven", ".maps[1::2].name", TYPES, ["two", "four"]),
    ("recursive", "..", [1, 2, 3], [[1, 2, 3]]),
    ("filter", "[?(@<5)]", [2, 6, 3, 7], [2, 3]),
    ("union", "[1,3,4]", [0, 1, 2, 3, 4], [1, 3, 4]),
    ("array", "[0:2]", ["Monday", "Tudesday"], ["Monday", "Tudesday"]),
    ("dict/", "$.Labels.web/html", LABELS, [15]),
    ("dict/ employees", "$.Employees.jason", LABELS, ["manager"]),
    ("dict-", ".Labels.k8s-app", LABELS, [20]),
    ("exists filter", "[?(@.z)].id", POINTS, ["i2", "i5"]),
    ("bracket key", "[0]['id']", POINTS, ["i1"]),
    (
        "range addresss",
        ".items[*].status.addresses[*].address",
        NODES,
        ["127.0.0.1", "127.0.0.2", "127.0.0.3"],
    ),
    ("item name", ".items[*].metadata.name", NODES, ["127.0.0.1", "127.0.0.2"]),
    (
        "union nodes capacity",
        ".items[*]['metadata.name', 'status.capacity']",
        NODES,
        ["127.0.0.1", "127.0.0.2", {"cpu": "4"}, {"cpu": "8"}],
    ),
    ("user password", '.users[?(@.name=="e2e")].user.password', NODES, ["secret"]),
    ("hostname", r".items[0].metadata.labels.kubernetes\.io/hostname", NODES, ["127.0.0.1"]),
    (
        "hostname filter",
        r'.items[?(@.metadata.labels.kubernetes\.io/hostname=="127.0.0.1")].kind',
        NODES,
        ["None"],
    ),
    ("bool item", ".items[?(@..ready==true)].metadata.name", NODES, ["127.0.0.1"]),
    ("recursive name", "..name", NODES, ["127.0.0.1", "127.0.0.2", "myself", "e2e"]),
    ("nonexistent field (missing keys allowed)", ".hello", LABELS, []),
    ("quoted key with a dot: kube splits it", ".metadata['a.b']", {"metadata": {"a.b": 1}}, []),
]


@pytest.mark.parametrize(
    ("name", "path", "data", "expected"), FIND_CASES, ids=[c[0] for c in FIND_CASES]
)
def test_find_selects_what_client_go_selects(
    name: str, path: str, data: Any, expected: list[Any]
) -> None:
    assert find(data, path) == expected


# jsonpath_test.go TestStructInput's failures (failStoreTests), on JSON data
EVALUATION_FAILURES = [
    ("invalid identifier", "hello", LABELS, "unrecognized identifier hello"),
    ("invalid array", ".Labels[0]", LABELS, "map[string]interface {} is not array or slice"),
    ("invalid filter operator", ".maps[?(@.value<>10)]", TYPES, "unrecognized filter operator <>"),
    ("out of bounds", ".integers[7]", TYPES, "array index out of bounds: index 7, length 4"),
    ("zero step", ".integers[::0]", TYPES, "step must be > 0"),
    ("compare one", "[?(@.x>0)]", [{"x": 1}, {}], "can only compare one element at a time"),
]


@pytest.mark.parametrize(
    ("name", "path", "data", "message"),
    EVALUATION_FAILURES,
    ids=[c[0] for c in EVALUATION_FAILURES],
)
def test_evaluation_fails_as_client_go_does(name: str, path: str, data: Any, message: str) -> None:
    with pytest.raises(JSONPathError) as failed:
        find(data, path)
    assert str(failed.value) == message
