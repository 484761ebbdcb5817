"""Annotation worksheets: a CSV with one row per response x rubric item, exported and re-imported.

An annotator fills the `score` column with a value of the item's scale (the number, or its label)
and may leave a `note`; a blank score means "not scored" and is imported as `unscored`. Imported
scores are the document `TUTOR_HUMAN` (`RUN/analysis/tutor_human.jsonl`): one `ItemScore` entry per
annotator x response x item (its `source` is `human:<annotator>`), and a summary listing the
annotators with their counts. Importing an annotator again replaces that annotator's scores only.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from mathlens.errors import UserError
from mathlens.runs.documents import DocumentSpec, RecordRef, records_digest
from mathlens.runs.store import RunStore

from .design import Cell
from .judge import ItemScore, ScoreSet, reference_text, request_text
from .rubric import Rubric, RubricItem

COLUMNS: tuple[str, ...] = (
    "response_key", "item_id", "item_code", "dimension", "model", "condition", "profile_id", "grade",
    "performance", "attitude", "self_efficacy", "question_id", "rubric_question", "allowed_scores",
    "request", "reference", "response", "judge_score", "judge_rationale", "score", "note",
)
REQUIRED: tuple[str, ...] = ("response_key", "item_id", "score")


class Annotator(BaseModel):
    """One annotator whose worksheet was imported."""

    name: str
    source: str
    rubric: str
    worksheet: str = Field(description="the file imported")
    counts: dict[str, int] = Field(default_factory=dict)


class HumanSummary(BaseModel):
    """The summary of `TUTOR_HUMAN`: every annotator imported, in import order."""

    annotators: list[Annotator] = Field(default_factory=list)


TUTOR_HUMAN = DocumentSpec("tutor_human", 1, ItemScore, HumanSummary,
                           rerun="mathlens tutor worksheet import RUN SHEET --annotator NAME")


def allowed_scores(item: RubricItem) -> str:
    """`"-1=negative | 0=no | 1=yes"`: what an annotator may write."""
    return " | ".join(f"{o.value}={o.label}" for o in item.scale)


def export_worksheet(path: Path, cells: Sequence[Cell], rubric: Rubric, items: Sequence[RubricItem] | None = None,
                     judge: ScoreSet | None = None) -> int:
    """Write the worksheet; `judge` fills the judge columns (leave it out for blind annotation).

    Returns the number of rows written.
    """
    items = list(items or rubric.items)
    by_key = {(s.record.key, s.item_id): s for s in judge.scores} if judge else {}
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        for cell in cells:
            for item in items:
                js = by_key.get((cell.key, item.id))
                writer.writerow({
                    "response_key": cell.key, "item_id": item.id, "item_code": item.code,
                    "dimension": item.dimension, "model": cell.model, "condition": cell.condition,
                    "profile_id": cell.profile.id, "grade": cell.profile.grade,
                    "performance": cell.profile.performance, "attitude": cell.profile.attitude,
                    "self_efficacy": cell.profile.self_efficacy, "question_id": cell.question.id,
                    "rubric_question": item.question, "allowed_scores": allowed_scores(item),
                    "request": request_text(cell.record.messages), "reference": reference_text(cell),
                    "response": cell.record.response or "",
                    "judge_score": "" if js is None or js.score is None else js.score,
                    "judge_rationale": "" if js is None else js.rationale,
                    "score": "", "note": "",
                })
                rows += 1
    return rows


def _parse_score(item: RubricItem, text: str, where: str) -> int:
    text = text.strip()
    try:
        value = int(text)
    except ValueError:
        try:
            return item.value_of(text.lower())
        except UserError:
            raise UserError(f"{where}: score {text!r} for {item.id} is not one of "
                            f"{allowed_scores(item)}") from None
    if value not in item.values:
        raise UserError(f"{where}: score {value} for {item.id} is not one of {allowed_scores(item)}")
    return value


def import_worksheet(path: Path, annotator: str, rubric: Rubric, records: Mapping[str, RecordRef]) -> ScoreSet:
    """Read a filled worksheet; every problem names its line. Blank scores become `unscored`.

    `records` maps the record keys of the run to their identities (a row naming another key is refused).
    """
    if not annotator.strip():
        raise UserError("name the annotator (--annotator)")
    try:
        fh = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise UserError(f"{path}: no such worksheet") from None
    source = f"human:{annotator}"
    scores: list[ItemScore] = []
    seen: set[tuple[str, str]] = set()
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"{path}: the worksheet lacks the column(s) {', '.join(missing)}")
        for row in reader:
            where = f"{path}:{reader.line_num}"
            key, item_id = (row.get("response_key") or "").strip(), (row.get("item_id") or "").strip()
            ref = records.get(key)
            if ref is None:
                raise UserError(f"{where}: response {key!r} is not in this run")
            item = rubric.item(item_id)
            if (key, item.id) in seen:
                raise UserError(f"{where}: {key} {item.id} is scored twice")
            seen.add((key, item.id))
            raw = row.get("score") or ""
            note = (row.get("note") or "").strip()
            if not raw.strip():
                scores.append(ItemScore(record=ref, item_id=item.id, source=source, status="unscored",
                                        error="left blank", rationale=note))
                continue
            value = _parse_score(item, raw, where)
            scores.append(ItemScore(record=ref, item_id=item.id, source=source, status="ok",
                                    score=value, label=item.label_of(value), rationale=note))
    if not scores:
        raise UserError(f"{path}: the worksheet has no rows")
    return ScoreSet(source=source, rubric=rubric.name, scores=tuple(scores))


def load_human(store: RunStore) -> dict[str, ScoreSet]:
    """Imported annotations by annotator name (read through `TUTOR_HUMAN`)."""
    doc = TUTOR_HUMAN.read(store.root)
    if doc is None:
        return {}
    by_source: dict[str, list[ItemScore]] = {a.source: [] for a in doc.summary.annotators}
    for score in TUTOR_HUMAN.entries(store.root):
        by_source.setdefault(score.source, []).append(score)
    return {a.name: ScoreSet(source=a.source, rubric=a.rubric, scores=tuple(by_source[a.source]))
            for a in doc.summary.annotators}


def save_human(store: RunStore, annotator: str, scores: ScoreSet, worksheet: Path | str = "") -> Path:
    """Add (or replace) one annotator's scores; the other annotators' are kept as they were."""
    if scores.source != f"human:{annotator}":
        raise ValueError(f"scores of {scores.source!r} cannot be saved as annotator {annotator!r}")
    legacy = TUTOR_HUMAN.legacy_path(store.root)
    if legacy.exists():
        raise UserError(f"{legacy}: annotations stored in the layout of an older mathlens, which this version "
                        "does not read; importing now would drop them. Move the file aside and import each "
                        "annotator's worksheet again.")
    doc = TUTOR_HUMAN.read(store.root)
    kept = [a for a in (doc.summary.annotators if doc else []) if a.name != annotator]
    others = {a.source for a in kept}
    entries = [s for s in TUTOR_HUMAN.entries(store.root) if s.source in others]
    entries += scores.scores
    summary = HumanSummary(annotators=[*kept, Annotator(name=annotator, source=scores.source, rubric=scores.rubric,
                                                        worksheet=str(worksheet), counts=scores.counts())])
    return TUTOR_HUMAN.write(store.root, run_id=store.manifest().run_id,
                             records_sha256=records_digest(store.records_path), entries=entries, summary=summary)
