"""`apiforge check`: the API-evolution rules between two revisions of a project's definitions.

Kinds are matched by group and kind, versions by name. What a change does to stored objects and clients is
a ``Finding`` with a rule name, a severity (``breaking`` fails the check; ``warning`` does not) and the file
and line of the new revision it is about (of the old one for what the new one no longer has). The schema
rules live in :mod:`generator.evolution_schema`, the conventions new API surface is held to in
:mod:`generator.evolution_lint`; the CEL cost rule is the server's own estimator
(``apiserver.schema.celstatic``, kube's static limits), and every other check ``apiforge generate`` makes on
the new revision is reported as ``invalid-definition``. Declared conversions are checked lossless on a sample
object with every field set (:mod:`generator.evolution_roundtrip`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from apiserver.schema.celstatic import rule_problems
from generator.check import check_definitions
from generator.definition import Definition, DefinitionErrors, JsonPath, Version
from generator.evolution_lint import lint_added
from generator.evolution_revision import Revision
from generator.evolution_roundtrip import HookFailed, losses
from generator.evolution_schema import Report, diff_schema, field_name
from generator.reference_example import example_object

__all__ = ["SEVERITIES", "Finding", "compare"]

SEVERITIES: Final = ("breaking", "warning")
"""``breaking`` fails the check; ``warning`` is reported only."""


@dataclass(frozen=True)
class Finding:
    """One rule a change breaks, where it is, and why it matters."""

    file: str
    line: int
    severity: str
    rule: str
    kind: str
    """``CronTab.stable.example.com``"""
    version: str
    field: str
    """The field as kube names it (``spec.cronSpec``), or "" for a kind or a version as a whole."""
    message: str

    def text(self) -> str:
        where = f"{self.kind}/{self.version}" if self.version else self.kind
        head = f"{self.file}:{self.line}: {self.severity}: {self.rule}"
        return f"{head}: {where}: {self.message}" if where else f"{head}: {self.message}"

    def json(self) -> dict[str, Any]:
        return asdict(self)


class _Compare:
    def __init__(self, old: Revision, new: Revision) -> None:
        self.old = old
        self.new = new
        self.found: list[Finding] = []
        self.cost_messages: set[tuple[str, int, str]] = set()

    def add(
        self,
        revision: Revision,
        definition: Definition,
        path: JsonPath,
        rule: str,
        severity: str,
        message: str,
        field: str = "",
    ) -> None:
        file, line = revision.locate(definition, path)
        version = str(path[1]) if len(path) > 1 and path[0] == "versions" else ""
        kind = f"{definition.kind}.{definition.group}"
        self.found.append(Finding(file, line, severity, rule, kind, version, field, message))

    def run(self) -> list[Finding]:
        for old in self.old.definitions:
            if self.new.find(old.group, old.kind) is None:
                self.add(
                    self.old,
                    old,
                    ("kind",),
                    "kind-removed",
                    "breaking",
                    f"{old.kind} was removed: its stored objects can no longer be read or deleted",
                )
        for new in self.new.definitions:
            old_definition = self.old.find(new.group, new.kind)
            if old_definition is None:
                for version in new.versions:
                    self.lint(new, version)
            else:
                self.kind(old_definition, new)
            self.costs(new)
            self.conversions(old_definition, new)
        self.checks()
        return sorted(self.found, key=lambda f: (f.file, f.line, f.rule, f.message))

    def lint(self, new: Definition, version: Version) -> None:
        """A version the old revision does not have: all of it is new API surface."""
        prefix: JsonPath = ("versions", version.name, "schema")
        lint_added(
            version.schema, (), False, self.reporter(new, prefix), _marker(self.new, new, prefix)
        )

    def reporter(self, new: Definition, prefix: JsonPath) -> Report:
        def report(rule: str, severity: str, at: JsonPath, message: str) -> None:
            self.add(self.new, new, (*prefix, *at), rule, severity, message, field_name(at))

        return report

    def kind(self, old: Definition, new: Definition) -> None:
        for key, was, now in (("scope", old.scope, new.scope), ("plural", old.plural, new.plural)):
            if was != now:
                self.add(
                    self.new,
                    new,
                    (key,),
                    f"{key}-changed",
                    "breaking",
                    f"{key} changed from {was} to {now}: clients address the resource differently",
                )
        self.storage(old, new)
        versions = {v.name: v for v in new.versions}
        for before in old.versions:
            after = versions.get(before.name)
            if after is None:
                self.add(
                    self.old,
                    old,
                    ("versions", before.name),
                    "version-removed",
                    "breaking",
                    f"version {before.name} was removed: clients of {new.group}/{before.name} fail",
                )
                continue
            if before.served and not after.served:
                self.add(
                    self.new,
                    new,
                    ("versions", after.name, "served"),
                    "version-removed",
                    "breaking",
                    f"version {after.name} is no longer served: clients of {new.group}/{after.name} fail",
                )
            self.version(new, before, after)
        old_names = {v.name for v in old.versions}
        for version in new.versions:
            if version.name not in old_names:
                self.lint(new, version)

    def storage(self, old: Definition, new: Definition) -> None:
        before, after = old.storage_version.name, new.storage_version.name
        if before == after:
            return
        kept = next((v for v in new.versions if v.name == before and v.served), None)
        if kept is None:
            message = (
                f"the storage version moved from {before} to {after} and {before} is no longer served: "
                f"objects stored in {before} cannot be read until every one is rewritten in {after}; "
                f"keep serving {before} until a storage migration has rewritten them"
            )
        else:
            message = (
                f"the storage version moved from {before} to {after}: objects stay stored in {before} "
                f"until rewritten; run a storage migration (read and write every object, as "
                f"kube-storage-version-migrator does) before {before} can be removed"
            )
        self.add(
            self.new,
            new,
            ("versions", after, "storage"),
            "storage-version-changed",
            "warning" if kept else "breaking",
            message,
        )

    def version(self, new: Definition, before: Version, after: Version) -> None:
        prefix: JsonPath = ("versions", after.name, "schema")
        marked = _marker(self.new, new, prefix)
        report = self.reporter(new, prefix)
        diff_schema(
            before.schema,
            after.schema,
            report,
            lambda node, at, required: lint_added(node, at, required, report, marked),
        )
        columns = {c.name for c in after.printer_columns}
        for column in before.printer_columns:
            if column.name not in columns:
                self.add(
                    self.new,
                    new,
                    ("versions", after.name, "printerColumns"),
                    "printer-column-removed",
                    "warning",
                    f"printer column {column.name!r} was removed: scripts that read "
                    "`kubectl get` output lose it",
                )

    def costs(self, new: Definition) -> None:
        for version in new.versions:
            for path, message in rule_problems(version.schema):
                file, line = self.new.locate(new, ("versions", version.name, "schema", *path))
                self.cost_messages.add((file, line, message))
                self.add(
                    self.new,
                    new,
                    ("versions", version.name, "schema", *path),
                    "cel-cost",
                    "breaking",
                    f"{field_name(path)}: {message}; kube-apiserver refuses the CRD",
                    field_name(path),
                )

    def conversions(self, old: Definition | None, new: Definition) -> None:
        """Round trips of an object with every hub field set that lose what the old revision kept."""
        try:
            known = set() if old is None else set(losses(old, _sample(old)))
            lost = list(losses(new, _sample(new)))
        except HookFailed as failure:
            self.add(
                self.new,
                new,
                ("versions", failure.version, "conversion"),
                "conversion-unchecked",
                "warning",
                f"the conversion hooks of {failure.version} failed on a sample object ({failure.reason}); "
                f"they are imported from {Path.cwd()}: run `apiforge check` in the project directory",
            )
            return
        for version, field in lost:
            if (version, field) not in known:
                self.add(
                    self.new,
                    new,
                    ("versions", version, "schema"),
                    "conversion-lossy",
                    "warning",
                    f"{field} of the storage version {new.storage_version.name} does not survive "
                    f"conversion to {version} and back: a client of {version} that updates an object "
                    "loses it (declare a rename, or a conversion hook)",
                    field,
                )

    def checks(self) -> None:
        """What `apiforge generate` refuses in the new revision (other than the costs, reported above)."""
        try:
            check_definitions(list(self.new.definitions), self.new.sources)
        except DefinitionErrors as failure:
            for error in failure.errors:
                file = self.new.shown_path(error.file)
                if (file, error.line, error.message) in self.cost_messages:
                    continue
                self.found.append(
                    Finding(
                        file,
                        error.line,
                        "breaking",
                        "invalid-definition",
                        "",
                        "",
                        error.field_path,
                        f"{error.field_path}: {error.message}"
                        if error.field_path
                        else error.message,
                    )
                )


def _sample(definition: Definition) -> dict[str, Any]:
    return example_object(definition, definition.storage_version, every=True)


def _marker(revision: Revision, definition: Definition, prefix: JsonPath) -> Any:
    """Whether a property of a compact definition says ``required: true`` or ``false`` (the compact format's
    optional and required markers). A CRD has no such marker: its ``required`` lists are all there is; nor
    has a field a type expression expands to (the fields of ``[]Condition``), which the user did not write."""
    source = revision.sources.source(definition)
    if source is None or source.format != "compact":
        return lambda path: True

    def marked(path: JsonPath) -> bool:
        node: Any = source.document.value
        for step in source.file_path((*prefix, *path)):
            present = (isinstance(node, dict) and step in node) or (
                isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
            )
            if not present:
                return True
            node = node[step]
        return isinstance(node, dict) and isinstance(node.get("required"), bool)

    return marked


def compare(old: Revision, new: Revision) -> list[Finding]:
    """Every finding of the change from ``old`` to ``new``, by file and line."""
    return _Compare(old, new).run()
