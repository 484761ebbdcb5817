"""The interpretability table (Table 8 of the calculus study): robustness, complexity, step count and
phrase sensitivity per course, exam and configuration, with standard deviations and bootstrap CIs.

Read from `analysis/sensitivity.json` (its per-exam rows). Without a sensitivity analysis, the
complexity and step-count columns are computed from `analysis/flow.json` alone (mean over the
original responses, seeded bootstrap CI) and the ablation columns are left empty.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.flowdata import flow_for, step_count
from mathlens.report.lookup import num
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.stats.bootstrap import bootstrap_ci

METRICS = (("robustness", "Robustness"), ("complexity", "Complexity"), ("step_count", "Step count"),
           ("phrase_sensitivity", "Phrase sensitivity"), ("answer_flip_rate", "Answer-flip rate"))


@dataclass(frozen=True)
class Interpretability:
    table: Table
    charts: tuple[ChartLayout, ...]
    source: str


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "sd": None, "ci_low": None, "ci_high": None, "n": 0}
    ci = bootstrap_ci(values, seed=0)
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else None
    return {"mean": mean, "sd": sd, "ci_low": ci.low, "ci_high": ci.high, "n": len(values)}


def _from_flow(ctx: ReportContext) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    exams: dict[str, Any] = {}
    for run in ctx.runs:
        if run.analysis("flow") is None:
            continue
        for rec in run.records:
            flow = flow_for(run, rec.key) if rec.variant.kind == "original" else None
            if flow is None:
                continue
            g = groups[(run.label, rec.model, rec.configuration, rec.exam_id)]
            if run.degenerate(rec.key):
                g["excluded"].append(1.0)  # counted, not averaged
                continue
            if flow.complexity is not None:
                g["complexity"].append(flow.complexity)
            n = step_count(flow)
            if n is not None:
                g["step_count"].append(n)
            exams.setdefault(rec.exam_id, run.exams.get(rec.exam_id))
    rows = []
    for (run_label, model, conf, exam_id), vals in groups.items():
        exam = exams.get(exam_id)
        rows.append({"run": run_label, "course": exam.course if exam else None,
                     "exam": exam.name if exam else exam_id, "model": model, "configuration": conf,
                     "n_questions": max((len(v) for k, v in vals.items() if k != "excluded"), default=0),
                     "excluded_degenerate": len(vals["excluded"]),
                     "complexity": _summary(vals["complexity"]), "step_count": _summary(vals["step_count"])})
    return rows


def _fmt(m: Any) -> str | None:
    if not isinstance(m, dict) or num(m.get("mean")) is None:
        return None
    s = f"{m['mean']:.3f}"
    if num(m.get("sd")) is not None:
        s += f" ± {m['sd']:.3f}"
    if num(m.get("ci_low")) is not None and num(m.get("ci_high")) is not None:
        s += f" [{m['ci_low']:.3f}, {m['ci_high']:.3f}]"
    return s


def build(ctx: ReportContext) -> Interpretability | None:
    """Table 8 with mean ± sd [95% CI] per cell, and bar charts of robustness and phrase sensitivity."""
    rows: list[dict[str, Any]] = []
    source = "sensitivity"
    for run in ctx.runs:
        doc = run.analysis("sensitivity")
        if isinstance(doc, dict):
            rows += [{"run": run.label, **r} for r in doc.get("exams") or [] if isinstance(r, dict)]
    if not rows:
        rows, source = _from_flow(ctx), "flow"
    if not rows:
        return None
    lead = ("run",) if ctx.multi_run else ()
    shown: list[tuple[Cell, ...]] = []
    export: list[tuple[Cell, ...]] = []
    for r in rows:
        head = (*(r.get(c) for c in lead), r.get("course"), r.get("exam"), r.get("model"), r.get("configuration"),
                r.get("n_questions"))
        tail = (r.get("flagged_questions"), r.get("excluded_degenerate", 0))
        shown.append(head + tuple(_fmt(r.get(k)) for k, _ in METRICS) + tail)
        nums: list[Cell] = []
        for k, _ in METRICS:
            m = r.get(k)
            m = m if isinstance(m, dict) else {}
            nums += [num(m.get("mean")), num(m.get("sd")), num(m.get("ci_low")), num(m.get("ci_high"))]
        export.append(head + tuple(nums) + tail)
    head_cols = (*lead, "course", "exam", "model", "configuration", "questions")
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
    cats = list(dict.fromkeys(str(r.get("exam")) for r in rows))
    names = list(dict.fromkeys(f"{r.get('model')} · {r.get('configuration')}" for r in rows))
    for key, title, top in (("robustness", "Robustness (mean cosine)", 1.0),
                            ("phrase_sensitivity", "Phrase sensitivity (max 1 − cosine)", 1.0),
                            ("complexity", "Complexity score", None)):
        cell = {(f"{r.get('model')} · {r.get('configuration')}", str(r.get("exam"))): r.get(key) for r in rows}
        series = [Series(n, tuple(num((cell.get((n, c)) or {}).get("mean")) for c in cats),
                         lows=tuple(num((cell.get((n, c)) or {}).get("ci_low")) for c in cats),
                         highs=tuple(num((cell.get((n, c)) or {}).get("ci_high")) for c in cats)) for n in names]
        chart = grouped_bars(ctx.uid("chart", key), f"{title} by exam and configuration, with 95% CI", cats, series,
                             y_title=title, x_title="Exam", y_max=top)
        if chart is not None:
            charts.append(chart)
    return Interpretability(table=table, charts=tuple(charts), source=source)


SECTION = ReportSection(id="interpretability", title="Interpretability (robustness, complexity, sensitivity)",
                        template="sections/interpretability.html.j2", build=build, analyses=("sensitivity", "flow"))
