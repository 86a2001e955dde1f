"""Which names of a CustomResourceDefinition are accepted, and its NamesAccepted condition, as kube's naming
controller decides (k8s.io/apiextensions-apiserver pkg/controller/status/naming_controller.go,
calculateNamesAndConditions): a name is kept when it is the one already accepted or no other CRD of the group
has accepted it; resources (plural, singular, short names) and kinds (kind, list kind) are separate pools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["accepted_names", "requested_names"]

Names = dict[str, Any]


def requested_names(crd: dict[str, Any]) -> Names:
    """spec.names with kube's defaults (singular: the lowercase kind; listKind: kind + "List")."""
    names = dict((crd.get("spec") or {}).get("names") or {})
    kind = str(names.get("kind", ""))
    names.setdefault("singular", kind.lower())
    names.setdefault("listKind", f"{kind}List")
    return names


def _in_use(requested: str, accepted: str, used: set[str]) -> str:
    """equalToAcceptedOrFresh: the error, or "" when the name may be taken."""
    if requested == accepted or requested not in used:
        return ""
    return f'"{requested}" is already in use'


def accepted_names(
    requested: Names, accepted: Names, others: Iterable[Names]
) -> tuple[Names, dict[str, str]]:
    """(the names now accepted, the NamesAccepted condition's status, reason and message); ``others``: the
    accepted names of the group's other CRDs."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for names in others:
        resources.update(
            n for n in (names.get("plural"), names.get("singular")) if isinstance(n, str) and n
        )
        resources.update(names.get("shortNames") or [])
        kinds.update(
            n for n in (names.get("kind"), names.get("listKind")) if isinstance(n, str) and n
        )
    # plural and kind are not omitempty in Go's CustomResourceDefinitionNames: "" until accepted
    new = {"plural": "", "kind": "", **accepted}
    condition = {"status": "Unknown", "reason": "", "message": ""}

    def conflict(reason: str, message: str) -> None:
        condition.update(status="False", reason=reason, message=message)

    for key, pool, reason in (
        ("plural", resources, "PluralConflict"),
        ("singular", resources, "SingularConflict"),
    ):
        problem = _in_use(str(requested.get(key, "")), str(accepted.get(key, "")), pool)
        if problem:
            conflict(reason, problem)
        else:
            new[key] = requested.get(key, "")
    short_names = list(requested.get("shortNames") or [])
    if short_names != list(accepted.get("shortNames") or []):
        mine = set(accepted.get("shortNames") or [])
        problems = [
            problem
            for name in short_names
            if name not in mine
            for problem in [_in_use(name, "", resources)]
            if problem
        ]
        if problems:
            # utilerrors.NewAggregate: one error as itself, several as "[a, b]"
            conflict(
                "ShortNamesConflict",
                problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]",
            )
        else:
            new["shortNames"] = short_names
    for key, reason in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        problem = _in_use(str(requested.get(key, "")), str(accepted.get(key, "")), kinds)
        if problem:
            conflict(reason, problem)
        else:
            new[key] = requested.get(key, "")
    if requested.get("categories"):
        new["categories"] = list(requested["categories"])
    else:
        new.pop("categories", None)
    if not new.get("shortNames"):
        new.pop("shortNames", None)
    if condition["status"] == "Unknown":
        condition.update(status="True", reason="NoConflicts", message="no conflicts found")
    return new, condition
