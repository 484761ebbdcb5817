"""Where the model fails (the `BREAKDOWN` document): the operations and concepts whose checked steps
are most often invalid, accuracy and score by question topic and by question type, and the
model beside the students per question and per exam when the exam file has their results.

The page shows the original prompts, one block of rows per model and configuration (ablation
variants have their own rows in `analysis/breakdown.jsonl`, never pooled with the originals).
Shares and accuracies are percentages with their bootstrap interval.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mathlens.analyze.breakdown.models import BREAKDOWN, BreakdownSummary, CellRow, GroupScore, StepShare
from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData, question_anchor
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table, percent_ci
from mathlens.rounding import percent

#: rows per model and configuration in the operation and concept tables
TOP = 10


@dataclass(frozen=True)
class Breakdown:
    #: invalid steps by operation and by concept
    steps: tuple[Table, ...]
    #: accuracy and score by topic and by question type
    groups: tuple[Table, ...]
    chart: ChartLayout | None
    #: per question and per exam against the students
    cohort: tuple[Table, ...]
    notes: tuple[str, ...]


def _cell_name(row: CellRow, run: RunData, ctx: ReportContext) -> str:
    name = f"{row.model} · {row.configuration}"
    return f"{run.label} · {name}" if ctx.multi_run else name


def _shares(ctx: ReportContext, found: list[tuple[RunData, BreakdownSummary]], what: str) -> Table | None:
    rows: list[tuple[Cell, ...]] = []
    for run, s in found:
        overall = {r.cell: r for r in s.overall if r.original}
        per_cell: dict[tuple[str, str, str], list[StepShare]] = defaultdict(list)
        for r in (s.operations if what == "operation" else s.concepts):
            if r.original and r.invalid:
                per_cell[r.cell].append(r)
        for group, shares in per_cell.items():
            every = overall.get(group)
            for r in [*shares[:TOP], *((every,) if every is not None else ())]:
                rows.append((_cell_name(r, run, ctx), r.label, r.invalid, r.checked, *percent_ci(r.share), r.responses))
    if not rows:
        return None
    level = found[0][1].confidence
    cols = ("model · configuration", what, "invalid steps", "checked steps", "invalid share (%)",
            f"{percent(level)} low", f"{percent(level)} high", "responses")
    return Table(ctx.uid("breakdown", what), f"Checked steps most often invalid, by {what}", cols, tuple(rows),
                 decimals={4: 1, 5: 1, 6: 1},
                 caption=f"The {TOP} {what}s with the most invalid steps per model and configuration (original "
                         "prompts), then every checked step ('all steps') for comparison. A step is checked when "
                         "its verdict is valid or invalid; one carrying several labels counts for each. Interval: "
                         "percentile bootstrap over responses.")


def _groups(ctx: ReportContext, found: list[tuple[RunData, BreakdownSummary]], what: str) -> Table | None:
    rows: list[tuple[Cell, ...]] = []
    for run, s in found:
        for g in (s.topics if what == "topic" else s.types):
            if g.original:
                rows.append((_cell_name(g, run, ctx), g.group, g.questions, g.responses, *percent_ci(g.accuracy),
                             g.score))
    if not rows:
        return None
    basis = ", ".join(sorted({s.score_basis for _, s in found}))
    cols = ("model · configuration", what, "questions", "responses", "accuracy (%)", "low", "high",
            f"score (% of points, {basis})")
    caption = ("Accuracy: correct final answers over the checkable ones, with a bootstrap interval over "
               "questions. A question with several topics counts in each." if what == "topic" else
               "Question types: the item's metadata.type when given, else multiple_choice, multi_part, "
               "single_answer (a reference answer) or open (none).")
    return Table(ctx.uid("breakdown", what), f"Accuracy and score by question {what}", cols, tuple(rows),
                 decimals={4: 1, 5: 1, 6: 1, 7: 1}, caption=caption)


def _questions(ctx: ReportContext, found: list[tuple[RunData, BreakdownSummary]]) -> Table | None:
    rows: list[tuple[Cell, ...]] = []
    links: list[str | None] = []
    for run, s in found:
        if not s.questions_with_class_average:
            continue
        for e in run.all_entries(BREAKDOWN):
            if e.original and e.class_average is not None:
                rows.append((e.question_id, e.exam_id, _cell_name(e, run, ctx), e.score, e.class_average,
                             e.difference, e.z_score))
                links.append(None if ctx.multi_run else ctx.href(question_anchor(e.exam_id, e.question_id)))
    if not rows:
        return None
    cols = ("question", "exam", "model · configuration", "score (%)", "class average (%)",
            "difference (points of %)", "z-score")
    return Table(ctx.uid("breakdown", "class"), "Questions against the class average", cols, tuple(rows),
                 decimals={3: 1, 4: 1, 5: 1, 6: 2}, row_links=tuple(links),
                 caption="Per-question class averages from the exam file; the z-score uses the class's standard "
                         "deviation on the question when the file gives it. Descriptive comparisons only.")


def _exams(ctx: ReportContext, found: list[tuple[RunData, BreakdownSummary]]) -> Table | None:
    rows = tuple((e.exam_name, _cell_name(e, run, ctx), e.score, e.cohort.class_average, e.cohort.difference,
                  e.cohort.z_score, e.cohort.percentile)
                 for run, s in found for e in s.exams if e.original)
    if not rows:
        return None
    cols = ("exam", "model · configuration", "score (%)", "class average (%)", "difference (points of %)",
            "z-score", "percentile")
    return Table(ctx.uid("breakdown", "cohort"), "Exams against the cohort", cols, rows,
                 decimals={2: 1, 3: 1, 4: 1, 5: 2, 6: 1},
                 caption="z-score against the class's mean and standard deviation (or per-student scores, which "
                         "also give the percentile) when the exam file has them.")


def _topic_chart(ctx: ReportContext, found: list[tuple[RunData, BreakdownSummary]]) -> ChartLayout | None:
    rows: list[tuple[str, GroupScore]] = [(_cell_name(g, run, ctx), g) for run, s in found for g in s.topics
                                          if g.original and g.accuracy is not None]
    topics = list(dict.fromkeys(g.group for _, g in rows))
    names = list(dict.fromkeys(n for n, _ in rows))
    by = {(n, g.group): percent_ci(g.accuracy) for n, g in rows}
    series = []
    for n in names:
        vals = [by.get((n, t), (None, None, None)) for t in topics]
        series.append(Series(n, tuple(_num(v[0]) for v in vals), tuple(_num(v[1]) for v in vals),
                             tuple(_num(v[2]) for v in vals)))
    return grouped_bars(ctx.uid("breakdown-topics-chart"), "Accuracy by topic (with bootstrap interval)", topics,
                        series, y_title="Accuracy (%)", x_title="Topic", y_max=100.0)


def _num(v: Cell) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def build(ctx: ReportContext) -> Breakdown | None:
    """The breakdown tables of every run that has a breakdown document (None when none has)."""
    found: list[tuple[RunData, BreakdownSummary]] = []
    for run in ctx.runs:
        doc = run.document(BREAKDOWN)
        if doc is not None:
            found.append((run, doc.summary))
    if not found:
        return None
    steps = _present(_shares(ctx, found, "operation"), _shares(ctx, found, "concept"))
    groups = _present(_groups(ctx, found, "topic"), _groups(ctx, found, "type"))
    cohort = _present(_questions(ctx, found), _exams(ctx, found))
    if not (steps or groups or cohort):
        return None
    notes = tuple(dict.fromkeys(f"{run.label}: {n}" if ctx.multi_run else n for run, s in found for n in s.notes))
    return Breakdown(steps=steps, groups=groups, chart=_topic_chart(ctx, found), cohort=cohort, notes=notes)


def _present(*tables: Table | None) -> tuple[Table, ...]:
    return tuple(t for t in tables if t is not None)


SECTION = ReportSection(id="breakdown", title="Where the model fails: operations, concepts, topics",
                        template="sections/breakdown.html.j2", build=build, analyses=("breakdown",))
