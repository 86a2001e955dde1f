"""Table cells against kube's own test cases: apiextensions-apiserver
pkg/registry/customresource/tableconvertor/tableconvertor_test.go (Test_cellForJSONValue, the
"additional column containing multiple ... values" cases of Test_convertor_ConvertToTable) and apimachinery
pkg/util/duration/duration_test.go (TestHumanDuration)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from apiserver.endpoints.tablecells import cell_for_json_value, human_duration, json_path_cell
from apiserver.machinery.jsonpath import find

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("column_type", "value", "want"),
    [
        ("integer", 42, 42),
        ("integer", 3.14, 3),
        ("integer", True, None),
        ("integer", "foo", None),
        ("number", 42, 42.0),
        ("number", 3.14, 3.14),
        ("number", True, None),
        ("number", "foo", None),
        ("boolean", 42, None),
        ("boolean", 3.14, None),
        ("boolean", True, True),
        ("boolean", "foo", None),
        ("string", 42, None),
        ("string", 3.14, None),
        ("string", True, None),
        ("string", "foo", "foo"),
        ("date", 42, None),
        ("date", 3.14, None),
        ("date", True, None),
        ("date", rfc3339(NOW - timedelta(hours=12, minutes=30)), "12h"),
        ("date", rfc3339(NOW + timedelta(hours=12, minutes=30)), "<invalid>"),
        ("date", "", "<unknown>"),
        ("unknown", "foo", None),
    ],
)
def test_cell_for_json_value(column_type: str, value: Any, want: Any) -> None:
    """Test_cellForJSONValue, case for case (Go's int64 and float64 are Python's int and float)."""
    got = cell_for_json_value(column_type, value, NOW)
    assert got == want
    assert isinstance(got, bool) == isinstance(want, bool)  # Python's bool is an int; Go's is not


def test_a_number_cell_is_written_as_go_writes_float64() -> None:
    """float64(42) encodes as ``42`` in Go's JSON; Python's 42.0 would reach clients as ``42.0``."""
    assert type(cell_for_json_value("number", 42, NOW)) is int
    assert type(cell_for_json_value("number", 3.14, NOW)) is float


def test_a_date_that_is_not_rfc3339_is_invalid() -> None:
    assert cell_for_json_value("date", "2020-01-01", NOW) == "<invalid>"
    assert cell_for_json_value("date", "2020-13-01T00:00:00Z", NOW) == "<invalid>"
    assert cell_for_json_value("date", "0001-01-01T00:00:00Z", NOW) == "<unknown>"
    assert cell_for_json_value("date", rfc3339(NOW - timedelta(seconds=5)), NOW) == "5s"


SERVERS = {"spec": {"servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}]}}
FOO = {"spec": {"foo": [{"bar": [1]}, {"bar": [2, 3]}]}}


@pytest.mark.parametrize(
    ("obj", "path", "column_type", "want"),
    [
        # "Return table with additional column containing multiple string values"
        (SERVERS, ".spec.servers[0].hosts[0]", "string", "foo"),
        (SERVERS, ".spec.servers[0].hosts", "string", '["foo"]'),
        (SERVERS, ".spec.servers[1].hosts", "string", '["bar","baz"]'),
        (SERVERS, ".spec.servers[*].hosts", "string", '[["foo"],["bar","baz"]]'),
        # "... multiple integer values as string"
        (FOO, ".spec.foo[0].bar[0]", "string", "1"),
        (FOO, ".spec.foo[0].bar", "string", "[1]"),
        (FOO, ".spec.foo[1].bar", "string", "[2,3]"),
        (FOO, ".spec.foo[*].bar", "string", "[[1],[2,3]]"),
        # "... multiple integer values": only a simple path gives an integer cell
        (FOO, ".spec.foo[0].bar[0]", "integer", 1),
        (FOO, ".spec.foo[0].bar", "integer", None),
        (FOO, ".spec.foo[1].bar", "integer", None),
        (FOO, ".spec.foo[*].bar", "integer", None),
    ],
)
def test_json_path_cells(obj: dict[str, Any], path: str, column_type: str, want: Any) -> None:
    assert json_path_cell(column_type, find(obj, path), NOW) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ({"app": "web", "tier": "a<b>&c"}, '{"app":"web","tier":"a\\u003cb\\u003e\\u0026c"}'),
        ({"b": 1, "a": [True, None, 1.5]}, '{"a":[true,null,1.5],"b":1}'),
        (True, "true"),
        (1.5, "1.5"),
        (1e6, "1e+06"),  # fmt.Sprint(float64): %g, exponent form from 1e6
        (123456.0, "123456"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        ("héllo", "héllo"),
    ],
)
def test_string_cells_are_go_text(value: Any, want: str) -> None:
    """A string column prints scalars as Go's fmt and maps and lists as Go's json.Marshal (HTML-escaped,
    keys sorted): client-go jsonpath's PrintResults."""
    assert json_path_cell("string", [value], NOW) == want


def test_a_null_in_a_string_column_prints_as_go_templates_print_it() -> None:
    assert json_path_cell("string", [None], NOW) == "<no value>"
    assert json_path_cell("string", [], NOW) is None


def test_json_floats_as_go_encodes_them() -> None:
    """encoding/json: fixed notation in [1e-6, 1e21), else exponent form with e-7 (not e-07)."""
    assert json_path_cell("string", [[1e20, 1e21, 1e-7, 0.5, 100.0]], NOW) == (
        "[100000000000000000000,1e+21,1e-7,0.5,100]"
    )


@pytest.mark.parametrize(
    ("seconds", "want"),
    [
        (1, "1s"),
        (70, "70s"),
        (190, "3m10s"),
        (70 * 60, "70m"),
        (47 * 3600, "47h"),
        (49 * 3600, "2d1h"),
        ((8 * 24 + 2) * 3600, "8d"),
        (367 * 24 * 3600, "367d"),
        ((365 * 2 * 24 + 25) * 3600, "2y1d"),
        ((365 * 8 * 24 + 2) * 3600, "8y"),
        (-1.5, "0s"),  # int(d.Seconds()) truncates: within the two seconds of tolerated skew
        (-2, "<invalid>"),
    ],
)
def test_human_duration(seconds: float, want: str) -> None:
    """duration_test.go TestHumanDuration, and HumanDuration's tolerance of a clock a second ahead."""
    assert human_duration(seconds) == want
