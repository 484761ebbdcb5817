"""Every publication table mathlens exports, in the order of the index.

Adding a table is one builder function and one `TableBuilder` in its module, plus one line in
`BUILDERS` below. `build_tables` runs them all on a loaded run: a builder whose analysis document
is absent (or unreadable) is skipped with the command that writes it; one that finds no rows in
its document is skipped with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mathlens.report.export import agreement, calculus, maple, tutoring
from mathlens.report.export.builder import TableBuilder
from mathlens.report.export.table import PublicationTable
from mathlens.report.loader import RunData
from mathlens.unique import occurrences

BUILDERS: tuple[TableBuilder, ...] = (
    calculus.TABLE2,
    calculus.TABLE3,
    calculus.TABLE6,
    calculus.TABLE7,
    calculus.TABLE8,
    agreement.GRADING_PAIRS,
    agreement.GRADING_SELF,
    maple.BY_LEVEL,
    maple.BY_SUBJECT,
    maple.OVERALL,
    tutoring.TABLE1,
    tutoring.TABLE2,
    tutoring.TABLE2_PROFILES,
    tutoring.ANOVA,
    tutoring.CHECKS,
    tutoring.POSTHOC,
    tutoring.LETTERS,
    agreement.TUTORING,
    agreement.TUTORING_SELF,
)


@dataclass(frozen=True)
class Skipped:
    """A table not exported, and why."""

    id: str
    title: str
    source: str
    reason: str


@dataclass(frozen=True)
class BuiltTables:
    tables: tuple[PublicationTable, ...]
    skipped: tuple[Skipped, ...]


def build_tables(run: RunData, builders: tuple[TableBuilder, ...] = BUILDERS) -> BuiltTables:
    """Every table the run's analyses hold, and the ones skipped with their reasons."""
    tables: list[PublicationTable] = []
    skipped: list[Skipped] = []
    for b in builders:
        name = b.spec.name
        doc = run.document(b.spec)
        if doc is None:
            why = (f"analysis/{name}.jsonl could not be read (see the notes)" if b.spec.exists(run.root)
                   else f"no {name} analysis in the run; `{b.spec.rerun}` writes it")
            skipped.append(Skipped(b.id, b.title, name, why))
            continue
        built = [t for t in b.tables(run, doc) if t.rows]
        if not built:
            skipped.append(Skipped(b.id, b.title, name, f"analysis/{name}.jsonl has no rows for this table"))
        tables += built
    return BuiltTables(_unique_ids(tables), tuple(skipped))


def _unique_ids(tables: list[PublicationTable]) -> tuple[PublicationTable, ...]:
    """Tables whose ids collide (two annotators whose names slug alike) get `-2`, `-3`... appended."""
    return tuple(t if n == 1 else replace(t, id=f"{t.id}-{n}")
                 for t, n in zip(tables, occurrences(t.id for t in tables), strict=True))
