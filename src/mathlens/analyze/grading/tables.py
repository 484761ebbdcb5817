"""The seed's result tables from grades: Table 6 (score x/total, %, class average, per exam) and
Table 7 (the same exam across configurations), plus the comparison with the student cohort.

A score sums each question's points, averaged over the repeats that were graded. A question with
no usable grade is left out of both the score and the total and counted in `ungraded`, so a
partial score is visible as such (`complete = False`) instead of being a silent zero.

Cohort comparison: with only a class average (what the seed had) the difference is descriptive;
with per-student percentages the model's percentile (share of students at or below it) and
z-score (against the students' mean and standard deviation) are reported.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel

from mathlens.analyze.grading.judge import Grade
from mathlens.items.schema import Cohort, Exam


class CohortComparison(BaseModel):
    """The model's percentage beside the students'."""

    kind: str  # "descriptive" | "per_student" | "none"
    class_average: float | None = None
    class_size: int | None = None
    difference: float | None = None
    percentile: float | None = None
    z_score: float | None = None
    illustrative: bool = False


class ExamScore(BaseModel):
    """One row of Table 6: a model and configuration on one exam."""

    exam_id: str
    exam_name: str
    model: str
    configuration: str
    grader: str
    score: float
    total: float
    percent: float | None
    questions: int
    ungraded: int
    repeats: int
    complete: bool
    cohort: CohortComparison


def compare_with_cohort(percent: float | None, cohort: Cohort | None) -> CohortComparison:
    """Descriptive difference from the class average, or percentile and z-score from per-student scores."""
    if cohort is None or percent is None:
        return CohortComparison(kind="none")
    avg = cohort.class_average
    if cohort.scores:
        scores = list(cohort.scores)
        mean = statistics.fmean(scores)
        sd = statistics.stdev(scores) if len(scores) > 1 else None
        return CohortComparison(
            kind="per_student", class_average=avg if avg is not None else mean,
            class_size=cohort.size or len(scores), difference=percent - (avg if avg is not None else mean),
            percentile=100 * sum(s <= percent for s in scores) / len(scores),
            z_score=(percent - mean) / sd if sd else None, illustrative=cohort.illustrative,
        )
    if avg is None:
        return CohortComparison(kind="none", class_size=cohort.size)
    return CohortComparison(kind="descriptive", class_average=avg, class_size=cohort.size,
                            difference=percent - avg, illustrative=cohort.illustrative)


def exam_scores(grades: Iterable[Grade], exams: list[Exam], judge_run: int = 0) -> list[ExamScore]:
    """Table 6 rows, one per (exam, model, configuration, grader). Uses one judge run."""
    by_exam = {e.id: e for e in exams}
    cells: dict[tuple[str, str, str, str], dict[str, list[Grade]]] = defaultdict(lambda: defaultdict(list))
    for g in grades:
        if g.judge_run == judge_run:
            cells[(g.exam_id, g.model, g.configuration, g.grader)][g.question_id].append(g)
    rows = []
    for (exam_id, model, conf, grader), per_q in cells.items():
        exam = by_exam.get(exam_id)
        score = total = 0.0
        ungraded = 0
        repeats = max(len(v) for v in per_q.values())
        for gs in per_q.values():
            usable = [g for g in gs if g.status == "graded" and g.total is not None]
            if not usable:
                ungraded += 1
                continue
            score += statistics.fmean(g.total for g in usable if g.total is not None)
            total += usable[0].max_total
        percent = 100 * score / total if total else None
        rows.append(ExamScore(
            exam_id=exam_id, exam_name=exam.name if exam else exam_id, model=model, configuration=conf,
            grader=grader, score=round(score, 4), total=total, percent=percent, questions=len(per_q),
            ungraded=ungraded, repeats=repeats, complete=ungraded == 0,
            cohort=compare_with_cohort(percent, exam.cohort if exam else None),
        ))
    rows.sort(key=lambda r: (r.exam_id, r.model, r.configuration, r.grader))
    return rows


def table7(rows: list[ExamScore]) -> list[dict[str, object]]:
    """Table 7: per exam, the class average followed by each configuration's percentage."""
    out: list[dict[str, object]] = []
    for exam_id in sorted({r.exam_id for r in rows}):
        mine = [r for r in rows if r.exam_id == exam_id]
        avg = next((r.cohort.class_average for r in mine if r.cohort.class_average is not None), None)
        if avg is not None:
            out.append({"exam": mine[0].exam_name, "configuration": "student average", "model": "",
                        "percent": avg})
        for r in mine:
            out.append({"exam": r.exam_name, "configuration": r.configuration, "model": r.model,
                        "percent": r.percent})
    return out


def table6_csv(rows: list[ExamScore]) -> str:
    """Table 6 as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "model", "configuration", "grader", "score", "total", "percent", "class_average",
                     "difference", "percentile", "z_score", "ungraded", "repeats"])
    for r in rows:
        c = r.cohort
        writer.writerow([r.exam_name, r.model, r.configuration, r.grader, f"{r.score:g}", f"{r.total:g}",
                         _fmt(r.percent), _fmt(c.class_average), _fmt(c.difference), _fmt(c.percentile),
                         _fmt(c.z_score), r.ungraded, r.repeats])
    return buf.getvalue()


def table7_csv(rows: list[ExamScore]) -> str:
    """Table 7 as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "configuration", "model", "percent"])
    for row in table7(rows):
        pct = row["percent"]
        writer.writerow([row["exam"], row["configuration"], row["model"],
                         _fmt(pct if isinstance(pct, float | int) else None)])
    return buf.getvalue()


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"
