"""What a table builder is, and the helpers builders share.

A `TableBuilder` names one kind of table (its file id and title), the analysis document it reads
(`spec`) and the function that lays out its tables (`Layout`) from a loaded run and that document.
A builder lays out one table, several (one per score source, for the tutoring tables) or none (the
document has no rows for it); the registry (`registry.py`) turns an absent document or an empty
result into a skipped entry of the index, with the reason.

`columns_table` builds a table from `Col`s (a column and how its cell is read from an item),
dropping the columns whose `drop` rule says they carry nothing: `constant` (the same value on every
row: the model when a run has one model, the prompt variant when every row is on the original
prompts), `empty` (no value on any row), `zero` (nothing but zeros and blanks) or `only(value)`
(every row has the usual value, which the caption states).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mathlens.report.export.table import Cell, Column, PublicationTable
from mathlens.report.loader import RunData
from mathlens.runs.documents import Document, DocumentSpec

R = TypeVar("R")

#: The calculus study's codes for its three configurations (Table 8: B, R, C).
CONFIGURATION_CODES = {"baseline": "B", "rag": "R", "contextual": "C"}
CONFIGURATION_NAMES = {"baseline": "baseline", "rag": "RAG", "contextual": "contextual retrieval"}


@dataclass(frozen=True)
class Layout(Generic[R]):
    """One table as a builder lays it out: its title, columns and rows (one per item), caption and
    row-group columns. Its builder gives it the id (with `suffix` appended: one table per score
    source) and the source document."""

    title: str
    cols: Sequence[Col[R]]
    items: Sequence[R]
    caption: str = ""
    groups: int = 0
    suffix: str = ""


@dataclass(frozen=True)
class TableBuilder:
    """One kind of publication table, read from one analysis document: `build` lays out its tables
    from the run and that document (the registry reads it once, and skips the builder when the run
    lacks it); `tables` makes them, named by this builder's id and document."""

    id: str
    title: str
    spec: DocumentSpec[Any, Any]
    build: Callable[[RunData, Document[Any]], list[Layout[Any]]]

    def tables(self, run: RunData, doc: Document[Any]) -> list[PublicationTable]:
        """The tables of `run`, from its document `doc`."""
        return [columns_table(self.id + t.suffix, t.title, self.spec.name, t.cols, t.items, caption=t.caption,
                              groups=t.groups) for t in self.build(run, doc)]


def constant(values: list[Cell]) -> bool:
    """Drop rule: every row has the same value."""
    return len(set(values)) <= 1


def empty(values: list[Cell]) -> bool:
    """Drop rule: no row has a value."""
    return all(v is None for v in values)


def zero(values: list[Cell]) -> bool:
    """Drop rule: nothing but zeros and missing values."""
    return all(v in (0, None) for v in values)


def only(value: Cell) -> Callable[[list[Cell]], bool]:
    """Drop rule: every row has `value` (the usual case, which the caption states)."""
    def rule(values: list[Cell]) -> bool:
        return all(v == value for v in values)
    return rule


@dataclass(frozen=True)
class Col(Generic[R]):
    """A column of a table built from items of type R: its header and format, how a cell is read
    from an item, and when the column is left out (`drop`, given the column's values; None: never)."""

    column: Column
    get: Callable[[R], Cell]
    drop: Callable[[list[Cell]], bool] | None = None


def columns_table(id: str, title: str, source: str, cols: Sequence[Col[R]], items: Sequence[R], *,
                  caption: str = "", groups: int = 0) -> PublicationTable:
    """A table with one row per item. The first `groups` columns are row-group labels; a dropped
    column among them shrinks the group count with it."""
    kept: list[Col[R]] = []
    kept_groups = 0
    for i, col in enumerate(cols):
        if col.drop is not None and col.drop([col.get(it) for it in items]):
            continue
        kept.append(col)
        kept_groups += i < groups
    return PublicationTable(
        id=id, title=title, source=source, caption=caption, group_columns=kept_groups,
        columns=tuple(c.column for c in kept),
        rows=tuple(tuple(c.get(it) for c in kept) for it in items))


def configuration_key(name: str) -> tuple[int, str]:
    """Baseline, RAG, contextual first (the study's order), then any other configuration by name."""
    order = list(CONFIGURATION_CODES)
    return (order.index(name), "") if name in order else (len(order), name)


def exam_key(run: RunData, exam_id: str) -> tuple[int, str]:
    """The exam's position in the run (the order its items were given), unknown exams last."""
    ids = list(run.exams)
    return (ids.index(exam_id), exam_id) if exam_id in ids else (len(ids), exam_id)


def question_key(run: RunData, exam_id: str, question_id: str) -> tuple[int, str]:
    exam = run.exams.get(exam_id)
    ids = [q.id for q in exam.questions] if exam else []
    return (ids.index(question_id), question_id) if question_id in ids else (len(ids), question_id)


def exam_name(run: RunData, exam_id: str) -> str:
    exam = run.exams.get(exam_id)
    return exam.name if exam else exam_id


def course_of(run: RunData, exam_id: str) -> str | None:
    exam = run.exams.get(exam_id)
    return exam.course if exam else None


def slug(text: str) -> str:
    """A file-name-safe form of a score source (``human:alice`` -> ``human-alice``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "source"
