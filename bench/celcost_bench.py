"""How close the CEL budget's charge is to the time evaluations take: the runtime charges each
evaluation the estimator's bound with the object's actual sizes (apiserver/schema/celbudget.py), in kube's
units, which kube sizes at about 0.1 s per 1,000,000 (PerCallLimit) on Go. This measures, for rules of each
kind over realistic lists, the time ``validate_rules`` takes (conversion of the value included) per unit
charged, and the time of the worst cases the limits allow: one evaluation just under the per-call limit,
and a whole object just under the runtime budget.

Run from the repository root: ``.venv/bin/python -m bench.celcost_bench``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from apiserver.schema.cel import validate_rules
from apiserver.schema.celbudget import meter
from apiserver.schema.celcost import decl_type
from apiserver.schema.structural import Schema
from bench.common import Row, print_rows

INTEGERS = {"type": "integer"}
WORDS = {"type": "string", "maxLength": 64}
CASES: list[tuple[str, dict[str, Any], list[Any]]] = [
    ("self.all(x, x >= 0)", INTEGERS, list(range(3000))),
    ("self.exists_one(x, x == 5)", INTEGERS, list(range(3000))),
    ("self.all(x, self.exists(y, y == x))", INTEGERS, list(range(300))),
    ("self.map(x, x * 2).all(y, y >= 0)", INTEGERS, list(range(1000))),
    ("self.filter(x, x % 2 == 0).size() >= 0", INTEGERS, list(range(1000))),
    ("self.all(x, x.matches('^[a-z]+$'))", WORDS, ["a" * 64] * 3000),
    ("self.all(x, x.startsWith('a') && x.endsWith('a'))", WORDS, ["a" * 64] * 3000),
    ("self.all(x, x.contains('b'))", {"type": "string"}, ["a" * 800] * 3000),
    ("self.all(x, x.lowerAscii() == x)", WORDS, ["a" * 64] * 3000),
    ("self.all(x, x.split('a').size() > 0)", WORDS, ["a" * 64] * 200),
]
REPEAT = 5


def _schema(items: dict[str, Any], *rules: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "l": {
                "type": "array",
                "items": items,
                "x-kubernetes-validations": [{"rule": rule} for rule in rules],
            }
        },
    }


def _best(schema: dict[str, Any], data: list[Any]) -> float:
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        validate_rules({"l": data}, None, schema, [])
        times.append(time.perf_counter() - started)
    return min(times)


def _charge(rule: str, items: dict[str, Any], data: list[Any]) -> int:
    node = Schema(_schema(items, rule)["properties"]["l"])
    return meter(rule, decl_type(node), False).cost(data, None)


def run() -> list[Row]:
    per_unit: list[float] = []
    print(f"  {'rule':52} {'items':>6} {'charged':>9} {'time ms':>8} {'ns/unit':>8}")
    for rule, items, data in CASES:
        charged = _charge(rule, items, data)
        seconds = _best(_schema(items, rule), data)
        per_unit.append(seconds * 1e9 / charged)
        print(f"  {rule:52} {len(data):6} {charged:9} {seconds * 1e3:8.2f} {per_unit[-1]:8.1f}")
    # the worst the limits allow: one evaluation just under PerCallLimit, then ten of them (the budget)
    quadratic = "self.all(x, self.all(y, true))"
    pairs = list(range(570))
    call = _best(_schema(INTEGERS, quadratic), pairs)
    budget = _best(_schema(INTEGERS, *[quadratic] * 11), pairs)
    print(f"  one evaluation of {_charge(quadratic, INTEGERS, pairs)} units: {call * 1e3:.0f} ms")
    print(f"  ten of them, the eleventh refused (the budget): {budget * 1e3:.0f} ms")
    return [
        Row("celcost", "ns per unit charged, median", f"{statistics.median(per_unit):.0f}"),
        Row("celcost", "ns per unit charged, worst", f"{max(per_unit):.0f}"),
        Row("celcost", "one evaluation at the per-call limit", f"{call * 1e3:.0f} ms"),
        Row("celcost", "an object at the runtime budget", f"{budget * 1e3:.0f} ms"),
    ]


if __name__ == "__main__":
    print_rows(run())
