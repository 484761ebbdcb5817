"""Exam scores against class averages (Tables 6 and 7 of the calculus study) as tables and bar charts.

The rows are computed by the analyses that own them: the rubric grading's tables (`GRADE_TABLES`:
points, percent, the score of each repeat with their mean and sample standard deviation, the
questions whose grade changed between repeats) when the run was graded, else the breakdown
analysis's exam scores (`BREAKDOWN`, on its score basis: rubric grades or final-answer verdicts,
labelled as such, since a final-answer score is not the calculus study's rubric grade). Only
questions the run answered count, and the table says how many of the exam's questions that is.

Every figure is per model, configuration and prompt variant: ablation variants that were graded
(`mathlens grade --all-variants`) have their own rows, never pooled with the original prompts, and
Table 7 compares configurations on the original prompts only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from mathlens.analyze.breakdown.models import BREAKDOWN
from mathlens.analyze.grading.tables import GRADE_TABLES, CohortComparison, GradeChange
from mathlens.items.schema import Exam
from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData, question_anchor
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class ExamScore:
    """One Table 6 row as the page shows it (selected from the owning analysis's row)."""

    run: str
    exam: Exam
    model: str
    configuration: str
    variant: str
    basis: str
    #: "earned/possible" points, when the analysis counts points
    points: str | None
    percent: float | None
    questions: int
    cohort: CohortComparison
    original: bool = True
    #: the score of each repeat, in percent (one value without repeats)
    run_percents: tuple[float | None, ...] = ()
    mean_percent: float | None = None
    sd_percent: float | None = None
    #: questions whose grade changed between repeats (None: not known for this basis)
    changed: int | None = None
    #: the judge against the answer checker, as the grading analysis counted it ("" when not graded)
    judge_vs_checker: str = ""

    @property
    def repeated(self) -> bool:
        return len(self.run_percents) > 1

    @property
    def series(self) -> str:
        """The chart series / Table 7 label: model and configuration (and variant, when not the original)."""
        name = f"{self.model} · {self.configuration}"
        return name if self.original else f"{name} · {self.variant}"


@dataclass(frozen=True)
class Scores:
    table6: Table
    table7: Table | None
    chart: ChartLayout | None
    notes: tuple[str, ...]
    changes: Table | None = None


class _OfExam(Protocol):
    @property
    def exam_id(self) -> str: ...


_R = TypeVar("_R", bound=_OfExam)


def _from_grade_tables(run: RunData) -> list[ExamScore] | None:
    """Table 6 rows as the grading analysis computed them (`GRADE_TABLES`), if the run has them."""
    doc = run.document(GRADE_TABLES)
    if doc is None:
        return None
    return [ExamScore(run=run.label, exam=exam, model=r.model, configuration=r.configuration,
                      variant=r.variant, basis=f"rubric ({r.grader})" if r.grader else "rubric",
                      points=f"{r.score:g}/{r.total:g}", percent=r.percent, questions=r.questions,
                      cohort=r.cohort, original=r.original,
                      run_percents=tuple(s.percent for s in r.run_scores), mean_percent=r.mean_percent,
                      sd_percent=r.sd_percent, changed=r.changed,
                      judge_vs_checker=_judge_mark(r.decisive, r.disagreements, r.judge_unreliable))
            for r, exam in _with_exams(run, doc.summary.table6)]


def _from_breakdown(run: RunData) -> list[ExamScore]:
    """Table 6 rows as the breakdown analysis computed them (on its score basis), if it has them."""
    doc = run.document(BREAKDOWN)
    if doc is None or doc.summary.score_basis == "none":
        return []
    return [ExamScore(run=run.label, exam=exam, model=r.model, configuration=r.configuration, variant=r.variant,
                      basis=doc.summary.score_basis, points=None, percent=r.score, questions=r.questions,
                      cohort=r.cohort, original=r.original)
            for r, exam in _with_exams(run, doc.summary.exams)]


def _with_exams(run: RunData, rows: Sequence[_R]) -> list[tuple[_R, Exam]]:
    """Each row with its exam; rows of an exam the run does not hold are left out."""
    return [(r, exam) for r in rows if (exam := run.exams.get(r.exam_id)) is not None]


def _judge_mark(decisive: int, disagreements: int, unreliable: bool) -> str:
    """`UNRELIABLE JUDGE: 3 of 4 decisive answers disagree`, or `1 of 9 ...`, or "" with none decisive."""
    if not decisive:
        return ""
    return ("UNRELIABLE JUDGE: " if unreliable else "") + f"{disagreements} of {decisive} decisive answers disagree"


def _changes_table(ctx: ReportContext) -> Table | None:
    """The questions whose rubric grade changed between runs (from `GRADE_TABLES`), or None."""
    found: list[tuple[RunData, GradeChange]] = []
    for run in ctx.runs:
        doc = run.document(GRADE_TABLES)
        if doc is not None:
            found.extend((run, c) for c in doc.summary.changes)
    if not found:
        return None
    variants = any(c.variant_kind != "original" for _, c in found)
    rows: list[tuple[Cell, ...]] = []
    links: list[str | None] = []
    for run, c in found:
        per_run = " · ".join("–" if g.total is None else f"{g.total:g}" for g in c.grades)
        rows.append(((run.label,) if ctx.multi_run else ()) + (c.exam_id, c.question_id, c.model, c.configuration)
                    + ((c.variant,) if variants else ()) + (c.grader, f"{per_run} of {c.max_total:g}", c.spread))
        links.append(ctx.href(question_anchor(c.exam_id, c.question_id)) if not ctx.multi_run else None)
    cols = (("run",) if ctx.multi_run else ()) + ("exam", "question", "model", "configuration") + (
        ("prompt variant",) if variants else ()) + ("grader", "grade in each run", "spread (points)")
    return Table(ctx.uid("grade-changes"), "Questions whose grade changed between runs", cols, tuple(rows),
                 row_links=tuple(links),
                 caption="Rubric totals of the first judge run (or each human grader) in every repeat of the run "
                         "(– : not graded in that run). A question graded the same in every run is not listed.")


def build(ctx: ReportContext) -> Scores | None:
    """Table 6 (score, percentage, class average), Table 7 (configurations side by side) and a bar chart."""
    scores = [s for run in ctx.runs for s in (_from_grade_tables(run) or _from_breakdown(run))]
    if not scores:
        return None
    variants = any(not s.original for s in scores)
    repeated = any(s.repeated for s in scores)
    judged = any(s.judge_vs_checker for s in scores)
    rows: list[tuple[Cell, ...]] = []
    notes: list[str] = []
    for s in scores:
        cohort = s.exam.cohort
        spread: tuple[Cell, ...] = ()
        if repeated:
            spread = (" · ".join("–" if p is None else f"{p:.1f}" for p in s.run_percents), s.mean_percent,
                      s.sd_percent, s.changed)
        rows.append(((s.run,) if ctx.multi_run else ()) + (
            s.exam.course, s.exam.name, s.model, s.configuration) + ((s.variant,) if variants else ()) + (
            s.basis, s.points, s.percent) + spread + (s.cohort.class_average, s.cohort.difference,
                                                      f"{s.questions} of {len(s.exam.questions)}")
            + ((s.judge_vs_checker or None,) if judged else ()))
        if cohort and cohort.illustrative and cohort.note:
            notes.append(f"{s.exam.name}: {cohort.note}")
    cols = (("run",) if ctx.multi_run else ()) + ("course", "exam", "model", "configuration") + (
        ("prompt variant",) if variants else ()) + ("points from", "score", "score (%)") + (
        ("score in each run (%)", "mean over runs (%)", "sd over runs (%)", "questions with a changed grade")
        if repeated else ()) + ("class average (%)", "difference (points of %)", "questions") + (
        ("judge vs checker",) if judged else ())
    one_decimal = [cols.index(c) for c in ("score (%)", "mean over runs (%)", "sd over runs (%)",
                                           "class average (%)", "difference (points of %)") if c in cols]
    table6 = Table(ctx.uid("exam-scores"),
                   "Exam performance against the class (as in Table 6 of the calculus study)", cols,
                   tuple(rows), decimals={i: 1 for i in one_decimal},
                   caption="Only the questions the run answered count (see the last column). Class averages are "
                           "descriptive comparisons only (no inferential test), as in the calculus study."
                           + (" Each graded prompt variant has its own rows." if variants else "")
                           + (" A rubric score grades the whole solution; its final-answer points are the answer "
                              "checker's where it is decisive. Judge vs checker: decisive final answers on which "
                              "the judge's own points contradict the checker (unreliable above a fifth)."
                              if judged else "")
                           + (" With repeated runs the score averages each question over the runs; the sd is the "
                              "sample standard deviation of the runs' scores." if repeated else ""))
    several_bases = len({s.basis for s in scores}) > 1

    def series_of(s: ExamScore) -> str:
        name = s.series + (f" · {s.basis}" if several_bases else "")
        return f"{s.run} · {name}" if ctx.multi_run else name

    exams = list(dict.fromkeys(s.exam.name for s in scores))
    series_names = list(dict.fromkeys(series_of(s) for s in scores))
    values = {(series_of(s), s.exam.name): s.percent for s in scores}
    series = [Series(n, tuple(values.get((n, e)) for e in exams)) for n in series_names]
    avgs = {s.exam.name: (s.exam.cohort.class_average if s.exam.cohort else None) for s in scores}
    if any(v is not None for v in avgs.values()):
        series.append(Series("class average", tuple(avgs[e] for e in exams)))
    chart = grouped_bars(ctx.uid("exam-scores-chart"), "Score by exam: model configurations and class average",
                         exams, series, y_title="Score (% of points)", x_title="Exam", y_max=100.0)
    table7 = None
    originals = [s for s in scores if s.original]
    if len({s.configuration for s in originals}) > 1:
        t7: list[tuple[Cell, ...]] = []
        names = list(dict.fromkeys(series_of(s) for s in originals))
        for e in exams:
            t7.append((e, "class average", avgs.get(e)))
            for n in names:
                if (n, e) in values:
                    t7.append((e, n, values[(n, e)]))
        table7 = Table(ctx.uid("configuration-scores"),
                       "Scores across configurations (as in Table 7 of the calculus study)",
                       ("exam", "model configuration", "score (%)"), tuple(t7), decimals={2: 1},
                       caption="Original prompts only." if variants else "")
    return Scores(table6=table6, table7=table7, chart=chart, notes=tuple(dict.fromkeys(notes)),
                  changes=_changes_table(ctx))


SECTION = ReportSection(id="scores", title="Exam scores and class averages", template="sections/scores.html.j2",
                        build=build, analyses=("grade_tables", "grades", "answers"))
