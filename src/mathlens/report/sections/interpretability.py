"""The interpretability table (Table 8 of the calculus study): robustness, complexity, step count and
phrase sensitivity per course, exam and configuration, with standard deviations and bootstrap CIs.

Read from the sensitivity document's exam rows. Without a sensitivity analysis, the complexity
and step-count columns are computed from the flow document alone (mean over the original
responses, seeded bootstrap CI) and the ablation columns are left empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.ablation.tables import MetricSummary
from mathlens.analyze.flow.models import FLOW
from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.stats.bootstrap import CI

METRICS = (("robustness", "Robustness"), ("complexity", "Complexity"), ("step_count", "Step count"),
           ("phrase_sensitivity", "Phrase sensitivity"), ("answer_flip_rate", "Answer-flip rate (answered pairs)"))


@dataclass(frozen=True)
class Interpretability:
    table: Table
    charts: tuple[ChartLayout, ...]
    source: str


@dataclass(frozen=True)
class Row:
    """One row of the table: an exam under one model and configuration (of one run)."""

    run: str
    course: str | None
    exam: str
    model: str
    configuration: str
    n_questions: int
    metrics: dict[str, MetricSummary]
    flagged_questions: int | None
    excluded_degenerate: int | None


def _metric(mean: float | None, sd: float | None, ci: CI | None) -> MetricSummary:
    """A flow analysis figure in the layout of a sensitivity one."""
    if ci is None:
        return MetricSummary(mean=mean, sd=sd, ci_low=None, ci_high=None, n=0, status="empty")
    ok = ci.status == "ok"
    return MetricSummary(mean=mean, sd=sd, ci_low=ci.low if ok else None, ci_high=ci.high if ok else None, n=ci.n,
                         status=ci.status)


def _from_sensitivity(run: RunData) -> list[Row]:
    doc = run.document(SENSITIVITY)
    if doc is None:
        return []
    return [Row(run=run.label, course=r.course, exam=r.exam, model=r.model, configuration=r.configuration,
                n_questions=r.n_questions, metrics={k: getattr(r, k) for k, _ in METRICS},
                flagged_questions=r.flagged_questions, excluded_degenerate=r.excluded_degenerate)
            for r in doc.summary.exams]


def _from_flow(run: RunData) -> list[Row]:
    """The flow analysis's own exam rows (every original response; no ablation columns)."""
    doc = run.document(FLOW)
    if doc is None:
        return []
    rows = []
    for r in doc.summary.exams:
        exam = run.exams.get(r.exam_id)
        rows.append(Row(run=run.label, course=exam.course if exam else None, exam=exam.name if exam else r.exam_id,
                        model=r.model, configuration=r.configuration, n_questions=r.responses,
                        metrics={"complexity": _metric(r.mean_complexity, r.sd_complexity, r.complexity_ci),
                                 "step_count": _metric(r.mean_steps, r.sd_steps, r.steps_ci)},
                        flagged_questions=None, excluded_degenerate=None))
    return rows


def _fmt(m: MetricSummary | None) -> str | None:
    if m is None or m.mean is None:
        return None
    s = f"{m.mean:.3f}"
    if m.sd is not None:
        s += f" ± {m.sd:.3f}"
    if m.ci_low is not None and m.ci_high is not None:
        s += f" [{m.ci_low:.3f}, {m.ci_high:.3f}]"
    return s


def _numbers(m: MetricSummary | None) -> tuple[Cell, Cell, Cell, Cell]:
    """Mean, sd and interval of a figure, as exported (four empty cells without one)."""
    return (m.mean, m.sd, m.ci_low, m.ci_high) if m is not None else (None, None, None, None)


def build(ctx: ReportContext) -> Interpretability | None:
    """Table 8 with mean ± sd [95% CI] per cell, and bar charts of robustness and phrase sensitivity."""
    rows = [row for run in ctx.runs for row in _from_sensitivity(run)]
    source = "sensitivity"
    if not rows:
        rows, source = [row for run in ctx.runs for row in _from_flow(run)], "flow"
    if not rows:
        return None
    multi = ctx.multi_run
    shown: list[tuple[Cell, ...]] = []
    export: list[tuple[Cell, ...]] = []
    for r in rows:
        head: tuple[Cell, ...] = (*((r.run,) if multi else ()), r.course, r.exam, r.model, r.configuration,
                                  r.n_questions)
        tail: tuple[Cell, ...] = (r.flagged_questions, r.excluded_degenerate)
        shown.append(head + tuple(_fmt(r.metrics.get(k)) for k, _ in METRICS) + tail)
        nums = tuple(x for k, _ in METRICS for x in _numbers(r.metrics.get(k)))
        export.append(head + nums + tail)
    head_cols = (*(("run",) if multi else ()), "course", "exam", "model", "configuration", "questions")
    table = Table(
        ctx.uid("interpretability"),
        "Interpretability metrics per exam and configuration (as in Table 8 of the calculus study)",
        head_cols + tuple(f"{t} (mean ± sd [95% CI])" for _, t in METRICS)
        + ("flagged questions", "excluded (degenerate responses)"), tuple(shown),
        caption=("Robustness: mean TF-IDF cosine between the original response and each ablation's response; "
                 "phrase sensitivity: the largest 1 − cosine. Complexity: C = 0.5|O| + 0.3|K| + 0.2·d̄ (its "
                 "absolute values are not comparable with the calculus study's tables). Degenerate responses (empty, "
                 "echoed, looping, wrong script) are left out of every figure and counted in the last column."
                 + (" Computed from the flow analysis only (no sensitivity analysis in this run)."
                    if source == "flow" else "")),
        export_columns=head_cols + tuple(f"{k} {s}" for k, _ in METRICS for s in ("mean", "sd", "ci_low", "ci_high"))
        + ("flagged_questions", "excluded_degenerate"), export_rows=tuple(export))
    charts = []
    cats = list(dict.fromkeys(r.exam for r in rows))
    names = list(dict.fromkeys(f"{r.model} · {r.configuration}" for r in rows))
    for key, title, top in (("robustness", "Robustness (mean cosine)", 1.0),
                            ("phrase_sensitivity", "Phrase sensitivity (max 1 − cosine)", 1.0),
                            ("complexity", "Complexity score", None)):
        cell = {(f"{r.model} · {r.configuration}", r.exam): r.metrics.get(key) for r in rows}

        def pick(n: str, c: str, attr: str, cell: dict[tuple[str, str], MetricSummary | None] = cell) -> float | None:
            m = cell.get((n, c))
            return getattr(m, attr) if m is not None else None

        series = [Series(n, tuple(pick(n, c, "mean") for c in cats), lows=tuple(pick(n, c, "ci_low") for c in cats),
                         highs=tuple(pick(n, c, "ci_high") for c in cats)) for n in names]
        chart = grouped_bars(ctx.uid("chart", key), f"{title} by exam and configuration, with 95% CI", cats, series,
                             y_title=title, x_title="Exam", y_max=top)
        if chart is not None:
            charts.append(chart)
    return Interpretability(table=table, charts=tuple(charts), source=source)


SECTION = ReportSection(id="interpretability", title="Interpretability (robustness, complexity, sensitivity)",
                        template="sections/interpretability.html.j2", build=build, analyses=("sensitivity", "flow"))
