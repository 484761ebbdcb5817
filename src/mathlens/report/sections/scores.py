"""Exam scores against class averages (Tables 6 and 7 of the calculus study) as tables and bar charts.

Points come from rubric grades (`analysis/grades.json`, judge totals per question) when present,
else from final-answer verdicts (`analysis/answers.json`: a question's points when its answer is
correct, or the points of each correct part) — labelled as such, since a final-answer score is not
the calculus study's rubric grade. With repeated runs the score is the mean over repeats. Only questions the
run answered count, and the table says how many of the exam's questions that is.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mathlens.items.schema import Exam, Question
from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData
from mathlens.report.lookup import first, num
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class ExamScore:
    run: str
    exam: Exam
    model: str
    configuration: str
    basis: str
    earned: float
    possible: float
    questions: int

    @property
    def percent(self) -> float | None:
        return 100.0 * self.earned / self.possible if self.possible else None


@dataclass(frozen=True)
class Scores:
    table6: Table
    table7: Table | None
    chart: ChartLayout | None
    notes: tuple[str, ...]


def _answer_points(q: Question, entry: dict[str, object]) -> tuple[float, float] | None:
    status = entry.get("status")
    possible = q.total_points if q.total_points is not None else 1.0
    if status in ("no_reference", "unverifiable"):
        return None
    parts = first(entry, "verdict.parts") or []
    if q.parts and isinstance(parts, list) and parts and all(p.points is not None for p in q.parts):
        by_label = {p.get("label"): p.get("status") for p in parts if isinstance(p, dict)}
        earned = sum(p.points or 0.0 for p in q.parts if by_label.get(p.label) == "correct")
        return earned, possible
    return (possible if status == "correct" else 0.0), possible


def _grade_points(q: Question, entries: list[dict[str, object]]) -> tuple[float, float] | None:
    graded = [e for e in entries if e.get("status", "graded") == "graded" and num(e.get("total")) is not None]
    if not graded:
        return None
    e = graded[0]  # the first judge run; repeated judge runs are compared in the agreement section
    total, max_total = num(e.get("total")) or 0.0, num(e.get("max_total"))
    possible = q.total_points if q.total_points is not None else (max_total or 1.0)
    if max_total:
        return possible * total / max_total, possible
    return total, possible


def exam_scores(run: RunData) -> list[ExamScore]:
    """Score of each (model, configuration, exam) in `run`, from grades, else from final answers."""
    basis = "rubric" if run.analysis("grades") is not None else "final answer" if run.analysis("answers") else None
    if basis is None:
        return []
    per: dict[tuple[str, str, str, int], list[tuple[float, float]]] = defaultdict(list)
    for rec in run.records:
        if rec.variant.kind != "original":
            continue
        q = run.question(rec.exam_id, rec.question_id)
        if q is None:
            continue
        if basis == "rubric":
            pts = _grade_points(q, run.entries("grades", rec.key))
        else:
            e = run.entry("answers", rec.key)
            pts = _answer_points(q, e) if e is not None else None
        if pts is not None:
            per[(rec.model, rec.configuration, rec.exam_id, rec.repeat)].append(pts)
    grouped: dict[tuple[str, str, str], list[list[tuple[float, float]]]] = defaultdict(list)
    for (model, conf, exam_id, _rep), rep_pts in per.items():
        grouped[(model, conf, exam_id)].append(rep_pts)
    out = []
    for (model, conf, exam_id), reps in grouped.items():
        k = len(reps)
        out.append(ExamScore(run=run.label, exam=run.exams[exam_id], model=model, configuration=conf, basis=basis,
                             earned=sum(e for r in reps for e, _ in r) / k,
                             possible=sum(p for r in reps for _, p in r) / k,
                             questions=max(len(r) for r in reps)))
    return out


def _from_grade_tables(run: RunData) -> list[ExamScore] | None:
    """Table 6 rows as the grading analysis computed them (`analysis/grade_tables.json`), if present."""
    doc = run.analysis("grade_tables")
    rows = doc.get("table6") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        return None
    out = []
    for r in rows:
        if not isinstance(r, dict):
            continue
        exam = run.exams.get(str(r.get("exam_id")))
        score, total = num(r.get("score")), num(r.get("total"))
        if exam is None or score is None or total is None:
            continue
        grader = str(r.get("grader") or "")
        out.append(ExamScore(run=run.label, exam=exam, model=str(r.get("model")),
                             configuration=str(r.get("configuration")),
                             basis=f"rubric ({grader})" if grader else "rubric",
                             earned=score, possible=total, questions=int(r.get("questions") or 0)))
    return out


def build(ctx: ReportContext) -> Scores | None:
    """Table 6 (score, percentage, class average), Table 7 (configurations side by side) and a bar chart."""
    scores = [s for run in ctx.runs for s in (_from_grade_tables(run) or exam_scores(run))]
    if not scores:
        return None
    rows: list[tuple[Cell, ...]] = []
    notes: list[str] = []
    for s in scores:
        cohort = s.exam.cohort
        avg = cohort.class_average if cohort else None
        pct = s.percent
        rows.append(((s.run,) if ctx.multi_run else ()) + (
            s.exam.course, s.exam.name, s.model, s.configuration, s.basis, f"{s.earned:g}/{s.possible:g}",
            None if pct is None else round(pct, 1), avg, None if pct is None or avg is None else round(pct - avg, 1),
            f"{s.questions} of {len(s.exam.questions)}"))
        if cohort and cohort.illustrative and cohort.note:
            notes.append(f"{s.exam.name}: {cohort.note}")
    cols = (("run",) if ctx.multi_run else ()) + (
        "course", "exam", "model", "configuration", "points from", "score", "score (%)", "class average (%)",
        "difference (points of %)", "questions")
    table6 = Table(ctx.uid("exam-scores"),
                   "Exam performance against the class (as in Table 6 of the calculus study)", cols,
                   tuple(rows), decimals={len(cols) - 4: 1, len(cols) - 3: 1, len(cols) - 2: 1},
                   caption="Only the questions the run answered count (see the last column). Class averages are "
                           "descriptive comparisons only (no inferential test), as in the calculus study.")
    exams = list(dict.fromkeys(s.exam.name for s in scores))
    series_names = list(dict.fromkeys(f"{s.model} · {s.configuration}" for s in scores))
    values = {(f"{s.model} · {s.configuration}", s.exam.name): s.percent for s in scores}
    series = [Series(n, tuple(values.get((n, e)) for e in exams)) for n in series_names]
    avgs = {s.exam.name: (s.exam.cohort.class_average if s.exam.cohort else None) for s in scores}
    if any(v is not None for v in avgs.values()):
        series.append(Series("class average", tuple(avgs[e] for e in exams)))
    chart = grouped_bars(ctx.uid("exam-scores-chart"), "Score by exam: model configurations and class average",
                         exams, series, y_title="Score (% of points)", x_title="Exam", y_max=100.0)
    table7 = None
    confs = list(dict.fromkeys(s.configuration for s in scores))
    if len(confs) > 1:
        t7: list[tuple[Cell, ...]] = []
        for e in exams:
            t7.append((e, "class average", avgs.get(e)))
            for n in series_names:
                if (n, e) in values:
                    t7.append((e, n, None if values[(n, e)] is None else round(values[(n, e)] or 0.0, 1)))
        table7 = Table(ctx.uid("configuration-scores"),
                       "Scores across configurations (as in Table 7 of the calculus study)",
                       ("exam", "model configuration", "score (%)"), tuple(t7), decimals={2: 1})
    return Scores(table6=table6, table7=table7, chart=chart, notes=tuple(dict.fromkeys(notes)))


SECTION = ReportSection(id="scores", title="Exam scores and class averages", template="sections/scores.html.j2",
                        build=build, analyses=("answers",))
