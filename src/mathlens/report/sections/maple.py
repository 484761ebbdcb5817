"""MAPLE results (the `MAPLE` document, `analysis/maple.jsonl`): accuracy and MAPLE by MATH level
and subject with CIs, the label set, and how often each error label was given.

Every table row, chart and label count belongs to one (model, configuration, variant) cell, as the
analysis computed it: baseline, RAG and each ablation variant are shown side by side, never pooled.
Charts draw the figure data the analysis stored (`MapleSummary.figure3` and `figure5`): one chart
per configuration and variant, one series per model.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.maple.results import MAPLE, Figure, GroupRow, MapleSummary
from mathlens.report.charts import ChartLayout, Series, grouped_bars, ranked_bars
from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.stats.bootstrap import CI

GROUP_COLS = ("model", "configuration", "variant", "group", "n", "correct", "scored", "unjudged", "accuracy",
              "accuracy low", "accuracy high", "mean MAPLE", "MAPLE low", "MAPLE high",
              "mean MAPLE (wrong answers)", "mean e", "degenerate (excluded)")
X_TITLES = {"level": "MATH level", "subject": "Subject"}


@dataclass(frozen=True)
class MapleData:
    settings: tuple[tuple[str, str], ...]
    tables: tuple[Table, ...]
    charts: tuple[ChartLayout, ...]


def _ci(ci: CI) -> tuple[float | None, float | None, float | None]:
    return ci.estimate, ci.low, ci.high


def _group_table(ctx: ReportContext, id: str, title: str, rows: list[GroupRow]) -> Table | None:
    body: list[tuple[Cell, ...]] = []
    for r in rows:
        body.append((r.model, r.configuration, r.variant, r.group, r.n, r.n_correct, r.n_scored, r.n_unjudged,
                     *_ci(r.accuracy), *_ci(r.mean_maple), r.mean_maple_incorrect.estimate, r.mean_e.estimate,
                     r.n_degenerate))
    return Table(ctx.uid("maple", id), title, GROUP_COLS, tuple(body)) if body else None


def figure_charts(ctx: ReportContext, figure: Figure, sfx: str = "") -> list[ChartLayout]:
    """Mean MAPLE and accuracy against the figure's x, one chart per (configuration, variant) and
    metric, one series (with CI whiskers) per model."""
    x_title = X_TITLES[figure.x]
    charts: list[ChartLayout] = []
    cells = list(dict.fromkeys((p.configuration, p.variant) for p in figure.points))
    for configuration, variant in cells:
        points = [p for p in figure.points if (p.configuration, p.variant) == (configuration, variant)]
        cats = list(dict.fromkeys(p.x for p in points))
        models = list(dict.fromkeys(p.model for p in points))
        at = {(p.model, p.x): p for p in points}
        for metric, name in (("maple", "Mean MAPLE (0–1)"), ("accuracy", "Accuracy (share correct)")):
            series = []
            for m in models:
                vals = [at.get((m, c)) for c in cats]
                series.append(Series(
                    m, tuple(getattr(p, metric) if p else None for p in vals),
                    lows=tuple(getattr(p, f"{metric}_low") if p else None for p in vals),
                    highs=tuple(getattr(p, f"{metric}_high") if p else None for p in vals)))
            title = f"{name} by {x_title.lower()} · {configuration} · {variant}{sfx}"
            chart = grouped_bars(ctx.uid("maple-chart", metric, figure.x, configuration, variant), title, cats,
                                 series, y_title=name, x_title=x_title, y_max=1.0)
            if chart is not None:
                charts.append(chart)
    return charts


def _labels(ctx: ReportContext, s: MapleSummary, sfx: str) -> tuple[list[Table], list[ChartLayout]]:
    names = {lb.id: lb.name for lb in s.labels.labels}
    tables = [Table(ctx.uid("maple-labels"), f"Error labels{sfx}",
                    ("label", "name", "severity", "weight", "definition"),
                    tuple((lb.id, lb.name, lb.severity, lb.weight, lb.definition) for lb in s.labels.labels))]
    counted = [r for r in s.overall if r.label_counts]
    charts: list[ChartLayout] = []
    if counted:
        tables.append(Table(ctx.uid("maple-label-counts"), f"Error labels given{sfx}",
                            ("model", "configuration", "variant", "label", "times given"),
                            tuple((r.model, r.configuration, r.variant, label, n)
                                  for r in counted for label, n in r.label_counts.items())))
    for r in counted:
        dist = [(names.get(label, label), float(n)) for label, n in r.label_counts.items()]
        chart = ranked_bars(ctx.uid("maple-label-dist", *r.cell),
                            f"How often each error label was given · {' · '.join(r.cell)}{sfx}", dist,
                            x_title="Steps carrying the label (count)", highlight_first=False, digits=0)
        if chart is not None:
            charts.append(chart)
    return tables, charts


def build(ctx: ReportContext) -> MapleData | None:
    """Tables overall, by level and by subject; charts of MAPLE and accuracy; label counts."""
    tables: list[Table] = []
    charts: list[ChartLayout] = []
    settings: list[tuple[str, str]] = []
    for run in ctx.runs:
        doc = run.document(MAPLE)
        if doc is None:
            continue
        s = doc.summary
        sfx = f" · {run.label}" if ctx.multi_run else ""
        settings += [(f"judge{sfx}", s.judge), (f"reflector{sfx}", s.reflector),
                     (f"reflection{sfx}", s.reflection + (f", up to {s.reflect_rounds} rounds"
                                                          if s.reflection == "loop" else "")),
                     (f"labels{sfx}", f"{s.label_procedure}: {s.labels_note}" if s.labels_note else s.label_procedure),
                     (f"formula{sfx}", s.formula), (f"v/r source{sfx}", s.vr_source),
                     (f"floor{sfx}", f"{s.floor:g}"),
                     (f"degenerate responses{sfx}", "included" if s.include_degenerate else
                      f"{s.excluded_degenerate} left out of every figure")]
        for key, rows, title in (("overall", s.overall, "All solutions"), ("by_level", s.by_level, "By MATH level"),
                                 ("by_subject", s.by_subject, "By subject")):
            t = _group_table(ctx, key, f"MAPLE · {title}{sfx}", rows)
            if t is not None:
                tables.append(t)
        charts.extend([*figure_charts(ctx, s.figure3, sfx), *figure_charts(ctx, s.figure5, sfx)])
        label_tables, label_charts = _labels(ctx, s, sfx)
        tables.extend(label_tables)
        charts.extend(label_charts)
    if not tables:
        return None
    return MapleData(settings=tuple(settings), tables=tuple(tables), charts=tuple(charts))


SECTION = ReportSection(id="maple", title="MAPLE", template="sections/maple.html.j2", build=build,
                        analyses=("maple",))
