"""The checks between definitions (no two claim one name of a group; a subresource's body is a served kind).

Apart from the per-definition checks (``check``), and light (no schema machinery imported): the build cache runs
these on every run over all definitions, cached or not, since adding a definition can break them.
"""

from __future__ import annotations

from generator.check_hooks import check_admission_hooks
from generator.definition import Definition, DefinitionError, JsonPath
from generator.findings import Findings, Locator

__all__ = ["across_problems", "check_across"]


def _check_unique(definitions: list[Definition], found: Findings) -> None:
    """No two definitions claim one group's kind, plural or short name (the later one is reported)."""
    claimed: dict[tuple[str, str, str], tuple[Definition, JsonPath]] = {}
    for d in definitions:
        group = d.group or "core"
        claims: list[tuple[str, str, JsonPath]] = [
            ("kind", d.kind, ("kind",)),
            ("plural", d.plural, ("plural",)),
        ]
        claims += [("short name", name, ("shortNames", i)) for i, name in enumerate(d.short_names)]
        for what, value, path in claims:
            earlier = claimed.get((d.group, what, value))
            if earlier is None:
                claimed[(d.group, what, value)] = (d, path)
            elif earlier[0] is not d:
                owner = f"{earlier[0].kind} at {found.where(*earlier)}"
                found.add(
                    d, path, f'{what} "{value}" of group {group} is already claimed by {owner}'
                )


def _check_subresource_kinds(definitions: list[Definition], found: Findings) -> None:
    """A subresource's body is a kind some definition serves in that version (its schema, codec, model)."""
    known = {(d.group, v.name, d.kind) for d in definitions for v in d.versions}
    for d in definitions:
        for sub in d.server.create_subresources:
            group = "" if sub.group == "core" else sub.group
            if sub.version and (group, sub.version, sub.kind) not in known:
                found.add(
                    d,
                    ("createSubresources", sub.name, "kind"),
                    f"no definition of {sub.kind} in {sub.group or 'core'}/{sub.version}",
                )


def check_across(definitions: list[Definition], found: Findings) -> None:
    """The checks that relate definitions to each other, and to the project's Python: an admission hook's
    module may change while its definition does not, so hooks are looked up on every run too."""
    _check_unique(definitions, found)
    _check_subresource_kinds(definitions, found)
    for definition in definitions:
        check_admission_hooks(definition, found.reporter(definition))


def across_problems(definitions: list[Definition], locate: Locator) -> list[DefinitionError]:
    """The problems between definitions (claims, subresource kinds): what the build cache checks again on every
    run, since each definition alone was checked when its file was."""
    found = Findings(locate)
    check_across(definitions, found)
    return found.errors
