"""Exam scores against class averages (Tables 6 and 7 of the calculus study) as tables and bar charts.

Points come from the rubric grading's tables (the `GRADE_TABLES` document) when present, else from
rubric grades (`GRADES`, judge totals per question), else from final-answer verdicts (`ANSWERS`: a
question's points when its answer is correct, or the points of each correct part) — labelled as
such, since a final-answer score is not the calculus study's rubric grade. With repeated runs the
score is the mean over repeats, and Table 6 adds the score of each run and their mean ± sample
standard deviation; a second table lists the questions whose rubric grade changed between runs
(`GradeTables.changes`). Only questions the run answered count, and the table says how many of the
exam's questions that is.

Every figure is per model, configuration and prompt variant: ablation variants that were graded
(`mathlens grade --all-variants`) have their own rows, never pooled with the original prompts, and
Table 7 compares configurations on the original prompts only.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from mathlens.analyze.grading.analyzer import ANSWERS, AnswerRecord
from mathlens.analyze.grading.grades import GRADES
from mathlens.analyze.grading.judge import Grade
from mathlens.analyze.grading.tables import GRADE_TABLES, GradeChange
from mathlens.items.schema import Exam, Question
from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.runs.documents import RecordRef


@dataclass(frozen=True)
class ExamScore:
    run: str
    exam: Exam
    model: str
    configuration: str
    variant: str
    basis: str
    earned: float
    possible: float
    questions: int
    original: bool = True
    #: the score of each repeat, in percent (one value without repeats)
    run_percents: tuple[float | None, ...] = ()
    #: questions whose grade changed between repeats (None: not known for this basis)
    changed: int | None = None
    #: the judge against the answer checker, as the grading analysis counted it ("" when not graded)
    judge_vs_checker: str = ""

    @property
    def percent(self) -> float | None:
        return 100.0 * self.earned / self.possible if self.possible else None

    @property
    def repeated(self) -> bool:
        return len(self.run_percents) > 1

    @property
    def spread(self) -> tuple[float | None, float | None]:
        """Mean and sample standard deviation of the per-run percentages (sd None with one run)."""
        values = [p for p in self.run_percents if p is not None]
        if not values:
            return None, None
        return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else None

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


def _answer_points(q: Question, entry: AnswerRecord) -> tuple[float, float] | None:
    possible = q.total_points if q.total_points is not None else 1.0
    if entry.status in ("no_reference", "unverifiable"):
        return None
    parts = entry.verdict.parts if entry.verdict is not None else []
    if q.parts and parts and all(p.points is not None for p in q.parts):
        by_label = {p.label: p.status for p in parts}
        earned = sum(p.points or 0.0 for p in q.parts if by_label.get(p.label) == "correct")
        return earned, possible
    return (possible if entry.status == "correct" else 0.0), possible


def _grade_points(q: Question, grades: list[Grade]) -> tuple[float, float] | None:
    # the first judge run; repeated judge runs are compared in the agreement section
    graded = [g for g in grades if g.judge_run == 0 and g.status == "graded" and g.total is not None]
    if not graded:
        return None
    g = graded[0]
    total = g.total or 0.0
    possible = q.total_points if q.total_points is not None else (g.max_total or 1.0)
    if g.max_total:
        return possible * total / g.max_total, possible
    return total, possible


def exam_scores(run: RunData) -> list[ExamScore]:
    """Score of each (model, configuration, variant, exam) in `run` on the original prompts, from
    rubric grades, else from final answers."""
    basis = ("rubric" if run.document(GRADES) is not None
             else "final answer" if run.document(ANSWERS) is not None else None)
    if basis is None:
        return []
    per: dict[tuple[str, str, str, str, int], list[tuple[float, float]]] = defaultdict(list)
    for rec in run.records:
        ref = RecordRef.of(rec)
        if not ref.original:
            continue
        q = run.question(rec.exam_id, rec.question_id)
        if q is None:
            continue
        if basis == "rubric":
            pts = _grade_points(q, run.entries(GRADES, rec.key))
        else:
            e = run.entry(ANSWERS, rec.key)
            pts = _answer_points(q, e) if e is not None else None
        if pts is not None:
            per[(*ref.group, rec.exam_id, rec.repeat)].append(pts)
    grouped: dict[tuple[str, str, str, str], list[list[tuple[float, float]]]] = defaultdict(list)
    for (model, conf, variant, exam_id, _rep), rep_pts in sorted(per.items(), key=lambda kv: kv[0][4]):
        grouped[(model, conf, variant, exam_id)].append(rep_pts)
    out = []
    for (model, conf, variant, exam_id), reps in grouped.items():
        exam = run.exams.get(exam_id)
        if exam is None:
            continue
        k = len(reps)
        per_run = tuple(100.0 * sum(e for e, _ in r) / total if (total := sum(p for _, p in r)) else None
                        for r in reps)
        out.append(ExamScore(run=run.label, exam=exam, model=model, configuration=conf, variant=variant,
                             basis=basis, earned=sum(e for r in reps for e, _ in r) / k,
                             possible=sum(p for r in reps for _, p in r) / k,
                             questions=max(len(r) for r in reps), run_percents=per_run))
    return out


def _from_grade_tables(run: RunData) -> list[ExamScore] | None:
    """Table 6 rows as the grading analysis computed them (`GRADE_TABLES`), if the run has them."""
    doc = run.document(GRADE_TABLES)
    if doc is None:
        return None
    out = []
    for r in doc.summary.table6:
        exam = run.exams.get(r.exam_id)
        if exam is None:
            continue
        out.append(ExamScore(run=run.label, exam=exam, model=r.model, configuration=r.configuration,
                             variant=r.variant, basis=f"rubric ({r.grader})" if r.grader else "rubric",
                             earned=r.score, possible=r.total, questions=r.questions, original=r.original,
                             run_percents=tuple(s.percent for s in r.run_scores), changed=r.changed,
                             judge_vs_checker=_judge_mark(r.decisive, r.disagreements, r.judge_unreliable)))
    return out


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
        links.append(ctx.href(_anchor(c.exam_id, c.question_id)) if not ctx.multi_run else None)
    cols = (("run",) if ctx.multi_run else ()) + ("exam", "question", "model", "configuration") + (
        ("prompt variant",) if variants else ()) + ("grader", "grade in each run", "spread (points)")
    return Table(ctx.uid("grade-changes"), "Questions whose grade changed between runs", cols, tuple(rows),
                 row_links=tuple(links),
                 caption="Rubric totals of the first judge run (or each human grader) in every repeat of the run "
                         "(– : not graded in that run). A question graded the same in every run is not listed.")


def _anchor(exam_id: str, question_id: str) -> str:
    """The in-page anchor of a question's block (as `QuestionView.anchor` makes it)."""
    return "q-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in f"{exam_id}-{question_id}")


def build(ctx: ReportContext) -> Scores | None:
    """Table 6 (score, percentage, class average), Table 7 (configurations side by side) and a bar chart."""
    scores = [s for run in ctx.runs for s in (_from_grade_tables(run) or exam_scores(run))]
    if not scores:
        return None
    variants = any(not s.original for s in scores)
    repeated = any(s.repeated for s in scores)
    judged = any(s.judge_vs_checker for s in scores)
    rows: list[tuple[Cell, ...]] = []
    notes: list[str] = []
    for s in scores:
        cohort = s.exam.cohort
        avg = cohort.class_average if cohort else None
        pct = s.percent
        spread: tuple[Cell, ...] = ()
        if repeated:
            mean, sd = s.spread
            spread = (" · ".join("–" if p is None else f"{p:.1f}" for p in s.run_percents),
                      None if mean is None else round(mean, 1), None if sd is None else round(sd, 1), s.changed)
        rows.append(((s.run,) if ctx.multi_run else ()) + (
            s.exam.course, s.exam.name, s.model, s.configuration) + ((s.variant,) if variants else ()) + (
            s.basis, f"{s.earned:g}/{s.possible:g}", None if pct is None else round(pct, 1)) + spread + (avg,
            None if pct is None or avg is None else round(pct - avg, 1), f"{s.questions} of {len(s.exam.questions)}")
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
                    pct7 = values[(n, e)]
                    t7.append((e, n, None if pct7 is None else round(pct7, 1)))
        table7 = Table(ctx.uid("configuration-scores"),
                       "Scores across configurations (as in Table 7 of the calculus study)",
                       ("exam", "model configuration", "score (%)"), tuple(t7), decimals={2: 1},
                       caption="Original prompts only." if variants else "")
    return Scores(table6=table6, table7=table7, chart=chart, notes=tuple(dict.fromkeys(notes)),
                  changes=_changes_table(ctx))


SECTION = ReportSection(id="scores", title="Exam scores and class averages", template="sections/scores.html.j2",
                        build=build, analyses=("grade_tables", "grades", "answers"))
