"""The seed's result tables from grades: Table 6 (score x/total, %, class average, per exam) and
Table 7 (the same exam across configurations), plus the comparison with the student cohort.

Rows are per model, configuration and prompt variant: baseline, RAG and every other configuration
get their own rows, and so does each graded ablation variant (graded only on request,
`mathlens grade --all-variants`), never pooled with the original prompts. The calculus study's
tables are the original-prompt rows; Table 7 holds only those.

A score sums each question's points, averaged over the repeats that were graded. A question with
no usable grade is left out of both the score and the total and counted in `ungraded`, so a
partial score is visible as such (`complete = False`) instead of being a silent zero.

Repeated runs (`mathlens run --runs N`): each row also keeps the score of every repeat
(`run_scores`: the points of the questions graded in that repeat, over their total) and the mean
and sample standard deviation of those scores over the repeats (`mean_percent ± sd_percent`, and
the same in points). A question whose graded totals differ between repeats is a `GradeChange`
(listed in `GradeTables.changes`, counted in the row's `changed`): the calculus study reports the
same grade in every one of its five runs, which these rows let a reader check. A question graded in
some repeats and ungraded in others is counted in `ungraded` of those runs, not as a change.

Cohort comparison: with only a class average (what the seed had) the difference is descriptive;
with the class's standard deviation too (`Cohort.std`) the z-score against the class average and
that deviation is added; with per-student percentages the model's percentile (share of students at
or below it) and z-score (against the students' mean and sample standard deviation) are reported.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from mathlens.analyze.grading.reconcile import UNRELIABLE_SHARE
from mathlens.analyze.judging.entries import Judgement as Grade
from mathlens.items.schema import Cohort, Exam
from mathlens.runs.documents import DocumentSpec

if TYPE_CHECKING:  # only named in annotations: the tables' models stay light to import (no SymPy)
    from mathlens.analyze.grading.judge import Grade

CohortKind = Literal["descriptive", "mean_sd", "per_student", "none"]


class CohortComparison(BaseModel):
    """The model's percentage beside the students'. `kind`: `descriptive` (class average only),
    `mean_sd` (class average and standard deviation: z-score), `per_student` (percentile and
    z-score from per-student scores), `none`."""

    kind: CohortKind
    class_average: float | None = None
    class_size: int | None = None
    difference: float | None = None
    percentile: float | None = None
    z_score: float | None = None
    illustrative: bool = False


class RunScore(BaseModel):
    """One repeat's score in a Table 6 row: the questions graded in that repeat, over their total."""

    repeat: int
    score: float
    total: float
    percent: float | None
    #: questions of the row without a usable grade in this repeat
    ungraded: int = 0


class RepeatGrade(BaseModel):
    """One question's grade in one repeat (`total` None: ungraded or not answered in that repeat)."""

    repeat: int
    total: float | None


class GradeChange(BaseModel):
    """A question whose grade differed between the repeats of one model, configuration, variant
    and grader: its total in every repeat of the row."""

    exam_id: str
    question_id: str
    model: str
    configuration: str
    variant: str = "original"
    variant_kind: str = "original"
    grader: str
    max_total: float
    grades: list[RepeatGrade]

    @property
    def spread(self) -> float:
        """Highest minus lowest graded total over the repeats."""
        totals = [g.total for g in self.grades if g.total is not None]
        return max(totals) - min(totals) if totals else 0.0


class ExamScore(BaseModel):
    """One row of Table 6: a model, configuration and prompt variant on one exam, by one grader.

    `score`/`percent` average each question over the repeats; `run_scores` are the repeats one by
    one, `mean_*`/`sd_*` their mean and sample standard deviation (sd None with one repeat)."""

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
    run_scores: list[RunScore] = Field(default_factory=list)
    mean_score: float | None = None
    sd_score: float | None = None
    mean_percent: float | None = None
    sd_percent: float | None = None
    #: questions whose graded total differed between repeats (see `GradeTables.changes`)
    changed: int = 0
    #: decisive final answers in the row and how many of them the judge's own points contradict
    #: (`reconcile.py`); a judge above `UNRELIABLE_SHARE` of them is marked unreliable
    decisive: int = 0
    disagreements: int = 0
    #: who scored the final-answer criterion in this row's grades
    final_answer: str = "checker"

    @property
    def judge_unreliable(self) -> bool:
        """True when the judge contradicts the checker on more than a fifth of the row's decisive answers."""
        return self.decisive > 0 and self.disagreements / self.decisive > UNRELIABLE_SHARE

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
    decisive: int = 0
    disagreements: int = 0

    @property
    def judge_unreliable(self) -> bool:
        """As `ExamScore.judge_unreliable` for the row this one is taken from."""
        return self.decisive > 0 and self.disagreements / self.decisive > UNRELIABLE_SHARE


class GradeTables(BaseModel):
    """The summary of `analysis/grade_tables.jsonl` (the document has no entries)."""

    graders: list[str] = Field(default_factory=list)
    table6: list[ExamScore] = Field(default_factory=list)
    table7: list[Table7Row] = Field(default_factory=list)
    #: questions whose grade changed between repeats, per model, configuration, variant and grader
    changes: list[GradeChange] = Field(default_factory=list)


#: `analysis/grade_tables.jsonl`: Tables 6 and 7 from every grade of the run (judge and human),
#: rewritten by `mathlens grade` after judge grading and after a worksheet import. The rows are in
#: the summary; no entries are written. Version 2: per-repeat scores, their mean and sd, and the
#: questions whose grade changed between repeats; cohort kind `mean_sd`.
GRADE_TABLES = DocumentSpec("grade_tables", 2, ExamScore, GradeTables, rerun="mathlens grade RUN")


def compare_with_cohort(percent: float | None, cohort: Cohort | None) -> CohortComparison:
    """Descriptive difference from the class average; with the class's standard deviation, the
    z-score against it; with per-student scores, percentile and z-score from those scores."""
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
    if cohort.std:
        return CohortComparison(kind="mean_sd", class_average=avg, class_size=cohort.size,
                                difference=percent - avg, z_score=(percent - avg) / cohort.std,
                                illustrative=cohort.illustrative)
    return CohortComparison(kind="descriptive", class_average=avg, class_size=cohort.size,
                            difference=percent - avg, illustrative=cohort.illustrative)


CellKey = tuple[str, str, str, str, str, str]  # exam, model, configuration, variant, variant kind, grader


def _usable(grades: list[Grade]) -> float | None:
    """The mean graded total of `grades` (one question in one repeat), or None when none is usable."""
    usable = [g.total for g in grades if g.status == "graded" and g.total is not None]
    return statistics.fmean(usable) if usable else None


def _sd(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None


@dataclass(frozen=True)
class _Row:
    """The grades of one Table 6 cell: question -> repeat -> that repeat's grades."""

    cell: CellKey
    grades: dict[str, dict[int, list[Grade]]]

    @property
    def repeats(self) -> list[int]:
        return sorted({r for per_rep in self.grades.values() for r in per_rep})

    def run_scores(self) -> list[RunScore]:
        out = []
        for rep in self.repeats:
            score = total = 0.0
            ungraded = 0
            for per_rep in self.grades.values():
                gs = per_rep.get(rep, [])
                value = _usable(gs)
                if value is None:
                    ungraded += 1
                    continue
                score += value
                total += gs[0].max_total
            out.append(RunScore(repeat=rep, score=round(score, 4), total=total,
                                percent=100 * score / total if total else None, ungraded=ungraded))
        return out

    def changes(self) -> list[GradeChange]:
        """Questions whose graded totals differ between repeats (empty with one repeat)."""
        repeats = self.repeats
        if len(repeats) < 2:
            return []
        exam_id, model, conf, variant, kind, grader = self.cell
        out = []
        for qid, per_rep in self.grades.items():
            totals = {rep: _usable(per_rep.get(rep, [])) for rep in repeats}
            if len({round(t, 6) for t in totals.values() if t is not None}) < 2:
                continue
            max_total = next(g.max_total for gs in per_rep.values() for g in gs)
            out.append(GradeChange(exam_id=exam_id, question_id=qid, model=model, configuration=conf,
                                   variant=variant, variant_kind=kind, grader=grader, max_total=max_total,
                                   grades=[RepeatGrade(repeat=rep, total=t) for rep, t in totals.items()]))
        return out


def _cells(grades: Iterable[Grade], judge_run: int) -> list[_Row]:
    cells: dict[CellKey, dict[str, dict[int, list[Grade]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for g in grades:
        if g.judge_run == judge_run:
            ref = g.record
            cells[(ref.exam_id, ref.model, ref.configuration, ref.variant, ref.variant_kind, g.grader)][
                ref.question_id][ref.repeat].append(g)
    return [_Row(cell, per_q) for cell, per_q in cells.items()]


def _sort_key(exam_id: str, model: str, conf: str, original: bool, variant: str, grader: str
              ) -> tuple[str, str, str, bool, str, str]:
    return exam_id, model, conf, not original, variant, grader


def exam_scores(grades: Iterable[Grade], exams: list[Exam], judge_run: int = 0) -> list[ExamScore]:
    """Table 6 rows, one per (exam, model, configuration, variant, grader). Uses one judge run.

    Each prompt variant is its own row (never pooled with the original prompts): a row of an
    ablation variant covers the questions that have that variant (`questions`)."""
    return _table6(_cells(grades, judge_run), exams)


def _table6(cells: list[_Row], exams: list[Exam]) -> list[ExamScore]:
    by_exam = {e.id: e for e in exams}
    rows = []
    for row in cells:
        exam_id, model, conf, variant, kind, grader = row.cell
        exam = by_exam.get(exam_id)
        score = total = 0.0
        ungraded = 0
        for per_rep in row.grades.values():
            gs = [g for rep_gs in per_rep.values() for g in rep_gs]
            per_repeat = [v for v in (_usable(rep_gs) for rep_gs in per_rep.values()) if v is not None]
            if not per_repeat:
                ungraded += 1
                continue
            score += statistics.fmean(per_repeat)
            total += gs[0].max_total
        percent = 100 * score / total if total else None
        checks = [c for per_rep in row.grades.values() for gs in per_rep.values() for g in gs for c in g.checks
                  if c.kind == "final_answer" and c.decisive and c.judge_points is not None]
        used = {c.used for per_rep in row.grades.values() for gs in per_rep.values() for g in gs for c in g.checks
                if c.kind == "final_answer" and c.decisive}
        runs = row.run_scores()
        run_points = [r.score for r in runs if r.total]
        run_percents = [r.percent for r in runs if r.percent is not None]
        rows.append(ExamScore(
            exam_id=exam_id, exam_name=exam.name if exam else exam_id, model=model, configuration=conf,
            variant=variant, variant_kind=kind, grader=grader, score=round(score, 4), total=total,
            percent=percent, questions=len(row.grades), ungraded=ungraded, repeats=len(runs), complete=ungraded == 0,
            cohort=compare_with_cohort(percent, exam.cohort if exam else None), run_scores=runs,
            mean_score=statistics.fmean(run_points) if run_points else None, sd_score=_sd(run_points),
            mean_percent=statistics.fmean(run_percents) if run_percents else None, sd_percent=_sd(run_percents),
            changed=len(row.changes()), decisive=len(checks), disagreements=sum(c.disagrees for c in checks),
            final_answer="judge" if used == {"judge"} else "checker",
        ))
    rows.sort(key=lambda r: _sort_key(r.exam_id, r.model, r.configuration, r.original, r.variant, r.grader))
    return rows


def grade_changes(grades: Iterable[Grade], judge_run: int = 0) -> list[GradeChange]:
    """The questions whose graded total differed between repeats, per model, configuration,
    variant and grader (ordered like Table 6, then by question)."""
    return _changes(_cells(grades, judge_run))


def _changes(cells: list[_Row]) -> list[GradeChange]:
    changes = [c for row in cells for c in row.changes()]
    changes.sort(key=lambda c: (*_sort_key(c.exam_id, c.model, c.configuration, c.variant_kind == "original",
                                           c.variant, c.grader), c.question_id))
    return changes


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
                                 variant=r.variant, grader=r.grader, percent=r.percent, decisive=r.decisive,
                                 disagreements=r.disagreements))
    return out


def grade_tables(grades: list[Grade], exams: list[Exam]) -> GradeTables | None:
    """Tables 6 and 7 from `grades` (None when there is no grade)."""
    cells = _cells(grades, 0)
    rows = _table6(cells, exams)
    if not rows:
        return None
    return GradeTables(graders=sorted({g.grader for g in grades}), table6=rows, table7=table7(rows),
                       changes=_changes(cells))


def write_table_csvs(folder: Path, tables: GradeTables) -> None:
    """`table6.csv`, `table7.csv` and `grade_changes.csv` beside the run's analysis documents."""
    (folder / "table6.csv").write_text(table6_csv(tables.table6), encoding="utf-8")
    (folder / "table7.csv").write_text(table7_csv(tables.table6), encoding="utf-8")
    (folder / "grade_changes.csv").write_text(changes_csv(tables.changes), encoding="utf-8")


def table6_csv(rows: list[ExamScore]) -> str:
    """Table 6 as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "model", "configuration", "variant", "grader", "score", "total", "percent",
                     "class_average", "difference", "percentile", "z_score", "questions", "ungraded", "repeats",
                     "run_percents", "mean_percent", "sd_percent", "changed", "decisive_answers",
                     "judge_disagreements", "judge_unreliable"])
    for r in rows:
        c = r.cohort
        writer.writerow([r.exam_name, r.model, r.configuration, r.variant, r.grader, f"{r.score:g}", f"{r.total:g}",
                         _fmt(r.percent), _fmt(c.class_average), _fmt(c.difference), _fmt(c.percentile),
                         _fmt(c.z_score, 2), r.questions, r.ungraded, r.repeats,
                         ";".join(_fmt(s.percent) for s in r.run_scores), _fmt(r.mean_percent), _fmt(r.sd_percent),
                         r.changed, r.decisive, r.disagreements, "yes" if r.judge_unreliable else ""])
    return buf.getvalue()


def changes_csv(changes: list[GradeChange]) -> str:
    """The questions whose grade changed between repeats, as CSV text (one column per repeat)."""
    repeats = sorted({g.repeat for c in changes for g in c.grades})
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "question", "model", "configuration", "variant", "grader", "max_total",
                     *(f"run_{r + 1}" for r in repeats), "spread"])
    for c in changes:
        by_rep = {g.repeat: g.total for g in c.grades}
        writer.writerow([c.exam_id, c.question_id, c.model, c.configuration, c.variant, c.grader, f"{c.max_total:g}",
                         *("" if by_rep.get(r) is None else f"{by_rep[r]:g}" for r in repeats), f"{c.spread:g}"])
    return buf.getvalue()


def table7_csv(rows: list[ExamScore]) -> str:
    """Table 7 as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["exam", "configuration", "model", "variant", "grader", "percent", "judge_disagreements"])
    for row in table7(rows):
        writer.writerow([row.exam, row.configuration, row.model, row.variant if row.kind == "model" else "",
                         row.grader, _fmt(row.percent),
                         f"{row.disagreements}/{row.decisive}" if row.decisive else ""])
    return buf.getvalue()


def _fmt(x: float | None, digits: int = 1) -> str:
    return "" if x is None else f"{x:.{digits}f}"
