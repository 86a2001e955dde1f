"""What of a variable a policy's expressions are handed (builtin/admissionregistration/projection.py):
cut down to the fields they select, and whole wherever a chain ends in something other than a field."""

from __future__ import annotations

from typing import Any

import pytest

from builtin.admissionregistration.projection import WHOLE, needed_fields, project

OBJECT = {
    "metadata": {"name": "x", "labels": {"a": "1", "b": "2"}},
    "spec": {"replicas": 3, "image": "busybox", "ports": [{"port": 80}]},
}


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        (["object.spec.replicas <= 3"], {"spec": {"replicas": 3}}),
        (["object.spec.replicas > 1", "object.metadata.name == 'x'"],
         {"spec": {"replicas": 3}, "metadata": {"name": "x"}}),
        (["object.metadata.labels.size() == 2"], {"metadata": {"labels": {"a": "1", "b": "2"}}}),
        (["has(object.spec.suspend)"], {"spec": OBJECT["spec"]}),
        (["object.spec.ports[0].port == 80"], {"spec": {"ports": [{"port": 80}]}}),
        (["object.spec.image.startsWith('busy')"], {"spec": {"image": "busybox"}}),
        (["object == oldObject"], OBJECT),
        (["object . spec . replicas > 0"], {"spec": {"replicas": 3}}),
    ],
)  # fmt: skip
def test_projection(sources: list[str], expected: Any) -> None:
    assert project(OBJECT, needed_fields(sources)["object"]) == expected


def test_only_the_variables_read_are_needed() -> None:
    needed = needed_fields(
        ["params.max > object.spec.replicas", "variables.x", "request.operation"]
    )
    assert set(needed) == {"params", "object", "request"}
    assert needed["request"] == {"operation": WHOLE}
    assert set(needed_fields(["oldObject.spec.replicas > 1"])) == {"oldObject"}
    # text in a string literal that looks like a chain only keeps more than needed
    assert needed_fields(["'object.spec' != ''"]) == {"object": {"spec": WHOLE}}
