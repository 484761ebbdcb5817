"""Per question of a run: responses counted, with what the answers, flow and sensitivity analyses found.

The report's question index shows these rows; they are counted here, once, from the records and
the stored documents (read through their specs), so the page only renders them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.overview import Counts
from mathlens.runs.records import RunRecord


class QuestionCounts(Counts):
    """One question of a run: its responses counted, with what the analyses present found.

    `correct`/`checked` are None without an answers analysis, `mean_complexity` and
    `with_invalid_step` None without a flow analysis, `phrase_sensitivity` (the largest over the
    run's models and configurations) None without a sensitivity analysis or ablation variants.
    Original prompts only, except `variants`, which counts the ablation and paraphrase records."""

    exam_id: str
    question_id: str
    responses: int = 0
    variants: int = 0
    errors: int = 0
    truncated: int = 0
    checked: int | None = None
    correct: int | None = None
    mean_complexity: float | None = None
    with_invalid_step: int | None = None
    phrase_sensitivity: float | None = None


def question_counts(root: Path, records: Iterable[RunRecord],
                    documents: Iterable[str] = ("answers", "flow", "sensitivity")) -> list[QuestionCounts]:
    """Per question of the run at `root` (in the order its records first name them), the counts of
    `QuestionCounts`, read from the records and those of the answers, flow and sensitivity
    documents that are present and named in `documents` (a reader that found one unreadable
    leaves it out)."""
    use = set(documents)
    rows: dict[tuple[str, str], QuestionCounts] = {}
    keys: dict[str, tuple[str, str]] = {}
    for rec in records:
        q = rows.setdefault((rec.exam_id, rec.question_id), QuestionCounts(exam_id=rec.exam_id,
                                                                            question_id=rec.question_id))
        if rec.variant.kind != "original":
            q.variants += 1
            continue
        keys[rec.key] = (rec.exam_id, rec.question_id)
        q.responses += 1
        q.errors += rec.status == "error"
        q.truncated += rec.truncated
    if "answers" in use and ANSWERS.read(root) is not None:
        for q in rows.values():
            q.checked, q.correct = 0, 0
        for a in ANSWERS.entries(root):
            found = keys.get(a.record.key)
            if found is not None:
                rows[found].checked = (rows[found].checked or 0) + 1
                rows[found].correct = (rows[found].correct or 0) + (a.status == "correct")
    if "flow" in use and FLOW.read(root) is not None:
        complexity: dict[tuple[str, str], list[float]] = {}
        for q in rows.values():
            q.with_invalid_step = 0
        for f in FLOW.entries(root):
            found = keys.get(f.record.key)
            if found is None or f.result is None:
                continue
            complexity.setdefault(found, []).append(f.result.metrics.complexity_score)
            rows[found].with_invalid_step = (rows[found].with_invalid_step or 0) + (
                f.result.metrics.first_invalid_step is not None)
        for found, values in complexity.items():
            rows[found].mean_complexity = sum(values) / len(values)
    if "sensitivity" in use and SENSITIVITY.read(root) is not None:
        for s in SENSITIVITY.entries(root):
            row = rows.get((s.exam_id, s.question_id))
            if row is not None and s.phrase_sensitivity is not None:
                row.phrase_sensitivity = max(row.phrase_sensitivity or s.phrase_sensitivity, s.phrase_sensitivity)
    return list(rows.values())
