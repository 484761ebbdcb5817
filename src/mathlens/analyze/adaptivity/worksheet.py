"""Annotation worksheets: a CSV with one row per response x rubric item, exported and re-imported.

An annotator fills the `score` column with a value of the item's scale (the number, or its label)
and may leave a `note`; a blank score means "not scored" and is imported as unscored (a response
with no score at all is left out). Reading is the judging core's (`mathlens.analyze.judging.worksheet`):
unknown responses or items, values off the scale and items scored twice are errors naming the
line, and the calculus sheets' column names (`key`, `criterion`, `points`, `comment`) are accepted
too. Imported scores are the document `TUTOR_HUMAN` (`RUN/analysis/tutor_human.jsonl`), schema
version 2: one `Judgement` entry per annotator x response (its `grader` is `human:<annotator>`),
and a summary listing the annotators with their item counts. Importing an annotator again
replaces that annotator's scores only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from mathlens.analyze.judging.entries import Judgement
from mathlens.analyze.judging.units import Target
from mathlens.analyze.judging.worksheet import format_value, read_sheet, replace_graders, stored_judgements, write_sheet
from mathlens.errors import UserError
from mathlens.runs.documents import DocumentSpec, RecordRef
from mathlens.runs.store import RunStore

from .design import Cell
from .judge import ScoreSet, reference_text, request_text
from .rubric import Rubric, RubricItem

COLUMNS: tuple[str, ...] = (
    "response_key", "item_id", "item_code", "dimension", "model", "condition", "profile_id", "grade",
    "performance", "attitude", "self_efficacy", "question_id", "rubric_question", "allowed_scores",
    "request", "reference", "response", "judge_score", "judge_rationale", "score", "note",
)


class Annotator(BaseModel):
    """One annotator whose worksheet was imported."""

    name: str
    grader: str
    rubric: str
    worksheet: str = Field(description="the file imported")
    #: item scores by status: `ok`, `unscored`
    counts: dict[str, int] = Field(default_factory=dict)


class HumanSummary(BaseModel):
    """The summary of `TUTOR_HUMAN`: every annotator imported, in import order."""

    annotators: list[Annotator] = Field(default_factory=list)


TUTOR_HUMAN = DocumentSpec("tutor_human", 2, Judgement, HumanSummary,
                           rerun="mathlens tutor worksheet import RUN SHEET --annotator NAME")


def allowed_scores(item: RubricItem) -> str:
    """`"-1=negative | 0=no | 1=yes"`: what an annotator may write."""
    return " | ".join(f"{o.value}={o.label}" for o in item.scale)


def export_worksheet(path: Path, cells: Sequence[Cell], rubric: Rubric, items: Sequence[RubricItem] | None = None,
                     judge: ScoreSet | None = None) -> int:
    """Write the worksheet; `judge` fills the judge columns (leave it out for blind annotation).

    Returns the number of rows written.
    """
    chosen = list(items or rubric.items)
    by_key = judge.values() if judge else {}

    def rows() -> Iterator[dict[str, object]]:
        for cell in cells:
            for item in chosen:
                js = by_key.get((cell.key, item.id))
                yield {
                    "response_key": cell.key, "item_id": item.id, "item_code": item.code,
                    "dimension": item.dimension, "model": cell.model, "condition": cell.condition,
                    "profile_id": cell.profile.id, "grade": cell.profile.grade,
                    "performance": cell.profile.performance, "attitude": cell.profile.attitude,
                    "self_efficacy": cell.profile.self_efficacy, "question_id": cell.question.id,
                    "rubric_question": item.question, "allowed_scores": allowed_scores(item),
                    "request": request_text(cell.record.messages), "reference": reference_text(cell),
                    "response": cell.record.response or "",
                    "judge_score": "" if js is None else format_value(js.value),
                    "judge_rationale": "" if js is None else js.rationale,
                    "score": "", "note": "",
                }

    return write_sheet(path, COLUMNS, rows())


def import_worksheet(path: Path, annotator: str, rubric: Rubric, records: Mapping[str, RecordRef]) -> ScoreSet:
    """Read a filled worksheet; every problem names its line. Blank scores are unscored items.

    `records` maps the record keys of the run to their identities (a row naming another key is refused).
    """
    if not annotator.strip():
        raise UserError("name the annotator (--annotator)")
    units = rubric.units()
    targets = {key: Target(record=ref, units=units) for key, ref in records.items()}
    read = read_sheet(path, targets, grader=annotator, noun="rubric item", missing="items not scored")
    if not read.rows:
        raise UserError(f"{path}: the worksheet has no rows")
    if not read.judgements:
        raise UserError(f"{path}: the worksheet holds no scores (every score cell is blank)")
    return ScoreSet(grader=f"human:{annotator}", rubric=rubric.name, judgements=tuple(read.judgements))


def load_human(store: RunStore) -> dict[str, ScoreSet]:
    """Imported annotations by annotator name (read through `TUTOR_HUMAN`)."""
    doc = TUTOR_HUMAN.read(store.root)
    if doc is None:
        return {}
    by_grader: dict[str, list[Judgement]] = {a.grader: [] for a in doc.summary.annotators}
    for judgement in TUTOR_HUMAN.entries(store.root):
        by_grader.setdefault(judgement.grader, []).append(judgement)
    return {a.name: ScoreSet(grader=a.grader, rubric=a.rubric, judgements=tuple(by_grader[a.grader]))
            for a in doc.summary.annotators}


def save_human(store: RunStore, annotator: str, scores: ScoreSet, worksheet: Path | str = "") -> Path:
    """Add (or replace) one annotator's scores; the other annotators' are kept as they were. A
    `TUTOR_HUMAN` this version cannot read is refused (importing would drop it)."""
    if scores.grader != f"human:{annotator}":
        raise ValueError(f"scores of {scores.grader!r} cannot be saved as annotator {annotator!r}")
    entries = replace_graders(stored_judgements(TUTOR_HUMAN, store.root), scores.judgements)
    doc = TUTOR_HUMAN.read(store.root)
    kept = [a for a in (doc.summary.annotators if doc else []) if a.name != annotator]
    summary = HumanSummary(annotators=[*kept, Annotator(name=annotator, grader=scores.grader, rubric=scores.rubric,
                                                        worksheet=str(worksheet), counts=scores.counts())])
    return TUTOR_HUMAN.write(store.root, run_id=store.manifest().run_id,
                             records=store.snapshot(), entries=entries, summary=summary)
