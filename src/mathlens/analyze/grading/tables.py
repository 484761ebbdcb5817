"""The seed's result tables from grades: Table 6 (score x/total, %, class average, per exam) and
Table 7 (the same exam across configurations), plus the comparison with the student cohort.

Rows are per model, configuration and prompt variant: baseline, RAG and every other configuration
get their own rows, and so does each graded ablation variant (graded only on request,
`mathlens grade --all-variants`), never pooled with the original prompts. The calculus study's
tables are the original-prompt rows; Table 7 holds only those.

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
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.grading.judge import Grade
from mathlens.items.schema import Cohort, Exam
from mathlens.runs.documents import DocumentSpec


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
    """One row of Table 6: a model, configuration and prompt variant on one exam, by one grader."""

    exam_id: str
    exam_name: str
    model: str
    configuration: str
    variant: str = "original"
    variant_kind: str = "original"
    grader: str
    score: float
    total: float
    percent: float | None
    questions: int
    ungraded: int
    repeats: int
    complete: bool
    cohort: CohortComparison

    @property
    def original(self) -> bool:
        """Computed on the unmodified prompts (the rows the calculus study's tables hold)."""
        return self.variant_kind == "original"


class Table7Row(BaseModel):
    """One row of Table 7: an exam's class average, or one configuration's percentage on it."""

    exam_id: str
    exam: str
    configuration: str
    model: str = ""
    variant: str = "original"
    grader: str = ""
    percent: float | None
    #: "class" for the student average, "model" for a configuration's score
    kind: Literal["class", "model"] = "model"


class GradeTables(BaseModel):
    """The summary of `analysis/grade_tables.jsonl` (the document has no entries)."""

    graders: list[str] = Field(default_factory=list)
    table6: list[ExamScore] = Field(default_factory=list)
    table7: list[Table7Row] = Field(default_factory=list)


#: `analysis/grade_tables.jsonl`: Tables 6 and 7 from every grade of the run (judge and human),
#: rewritten by `mathlens grade` after judge grading and after a worksheet import. The rows are in
#: the summary; no entries are written.
GRADE_TABLES = DocumentSpec("grade_tables", 1, ExamScore, GradeTables, rerun="mathlens grade RUN")


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
    """Table 6 rows, one per (exam, model, configuration, variant, grader). Uses one judge run.

    Each prompt variant is its own row (never pooled with the original prompts): a row of an
    ablation variant covers the questions that have that variant (`questions`)."""
    by_exam = {e.id: e for e in exams}
    cells: dict[tuple[str, str, str, str, str, str], dict[str, list[Grade]]] = defaultdict(lambda: defaultdict(list))
    for g in grades:
        if g.judge_run == judge_run:
            ref = g.record
            cells[(ref.exam_id, ref.model, ref.configuration, ref.variant, ref.variant_kind, g.grader)][
                ref.question_id].append(g)
    rows = []
    for (exam_id, model, conf, variant, kind, grader), per_q in cells.items():
        exam = by_exam.get(exam_id)
        score = total = 0.0
        ungraded = 0
        repeats = max(len(v) for v in per_q.values())
        for gs in per_q.values():
            usable = [g.total for g in gs if g.status == "graded" and g.total is not None]
            if not usable:
                ungraded += 1
                continue
            score += statistics.fmean(usable)
            total += gs[0].max_total
        percent = 100 * score / total if total else None
        rows.append(ExamScore(
            exam_id=exam_id, exam_name=exam.name if exam else exam_id, model=model, configuration=conf,
            variant=variant, variant_kind=kind, grader=grader, score=round(score, 4), total=total,
            percent=percent, questions=len(per_q), ungraded=ungraded, repeats=repeats, complete=ungraded == 0,
            cohort=compare_with_cohort(percent, exam.cohort if exam else None),
        ))
    rows.sort(key=lambda r: (r.exam_id, r.model, r.configuration, not r.original, r.variant, r.grader))
    return rows


def table7(rows: list[ExamScore]) -> list[Table7Row]:
    """Table 7: per exam, the class average followed by each configuration's percentage.

    Only rows on the original prompts: the table compares configurations on the exam as set;
    ablation variants keep their own rows in Table 6."""
    out: list[Table7Row] = []
    for exam_id in sorted({r.exam_id for r in rows}):
        mine = [r for r in rows if r.exam_id == exam_id and r.original]
        if not mine:
            continue
        avg = next((r.cohort.class_average for r in mine if r.cohort.class_average is not None), None)
        if avg is not None:
            out.append(Table7Row(exam_id=exam_id, exam=mine[0].exam_name, configuration="student average",
                                 percent=avg, kind="class"))
        for r in mine:
            out.append(Table7Row(exam_id=exam_id, exam=r.exam_name, configuration=r.configuration, model=r.model,
                                 variant=r.variant, grader=r.grader, percent=r.percent))
    return out


def grade_tables(grades: list[Grade], exams: list[Exam]) -> GradeTables | None:
    """Tables 6 and 7 from `grades` (None when there is no grade)."""
    rows = exam_scores(grades, exams)
    if not rows:
        return None
    return GradeTables(graders=sorted({g.grader for g in grades}), table6=rows, table7=table7(rows))


def write_table_csvs(folder: Path, tables: GradeTables) -> None:
    """`table6.csv` and `table7.csv` beside the run's analysis documents."""
    (folder / "table6.csv").write_text(table6_csv(tables.table6), encoding="utf-8")
    (folder / "table7.csv").write_text(table7_csv(tables.table6), encoding="utf-8")


def table6_csv(rows: list[ExamScore]) -> str:
    """Table 6 as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "model", "configuration", "variant", "grader", "score", "total", "percent",
                     "class_average", "difference", "percentile", "z_score", "questions", "ungraded", "repeats"])
    for r in rows:
        c = r.cohort
        writer.writerow([r.exam_name, r.model, r.configuration, r.variant, r.grader, f"{r.score:g}", f"{r.total:g}",
                         _fmt(r.percent), _fmt(c.class_average), _fmt(c.difference), _fmt(c.percentile),
                         _fmt(c.z_score), r.questions, r.ungraded, r.repeats])
    return buf.getvalue()


def table7_csv(rows: list[ExamScore]) -> str:
    """Table 7 as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "configuration", "model", "variant", "grader", "percent"])
    for row in table7(rows):
        writer.writerow([row.exam, row.configuration, row.model, row.variant if row.kind == "model" else "",
                         row.grader, _fmt(row.percent)])
    return buf.getvalue()


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"
