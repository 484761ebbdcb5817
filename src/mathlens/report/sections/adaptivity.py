"""Tutoring adaptivity (`analysis/tutor_stats.json`): dimension percentages by model and learner
performance (Table 1 of the tutoring study), adaptivity sub-metrics by context condition (Table 2), and the
two-way ANOVAs with assumption checks and Tukey HSD compact letters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.lookup import num
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table

ANALYSIS = "tutor_stats"


@dataclass(frozen=True)
class AdaptivityData:
    tables: tuple[Table, ...]
    charts: tuple[ChartLayout, ...]


def _ci(v: Any) -> tuple[float | None, float | None, float | None]:
    v = v if isinstance(v, dict) else {}
    return num(v.get("estimate")), num(v.get("low")), num(v.get("high"))


def _table1(ctx: ReportContext, rows: list[dict[str, Any]], sfx: str) -> tuple[Table, list[ChartLayout]]:
    body = tuple((r.get("dimension"), r.get("model"), r.get("performance"), *_ci(r.get("mean_percent")), r.get("n"),
                  r.get("excluded")) for r in rows)
    title = f"Dimension scores by model and learner performance (as in Table 1 of the tutoring study){sfx}"
    table = Table(ctx.uid("tutor-table1"), title,
                  ("dimension", "model", "performance", "mean (% of possible points)", "CI low", "CI high",
                   "responses", "excluded (not fully scored)"), body, decimals={3: 1, 4: 1, 5: 1},
                  caption="Adaptivity items Q2–Q3 score −1 for a negative response, so that dimension can fall "
                          "below 0%.")
    charts = []
    for dim in dict.fromkeys(str(r.get("dimension")) for r in rows):
        sub = [r for r in rows if str(r.get("dimension")) == dim]
        cats = list(dict.fromkeys(str(r.get("performance")) for r in sub))
        models = list(dict.fromkeys(str(r.get("model")) for r in sub))
        by = {(str(r.get("model")), str(r.get("performance"))): _ci(r.get("mean_percent")) for r in sub}
        series = [Series(m, tuple(by.get((m, c), (None,) * 3)[0] for c in cats),
                         lows=tuple(by.get((m, c), (None,) * 3)[1] for c in cats),
                         highs=tuple(by.get((m, c), (None,) * 3)[2] for c in cats)) for m in models]
        c = grouped_bars(ctx.uid("tutor-chart", dim), f"{dim.capitalize()} by learner performance{sfx}", cats, series,
                         y_title="% of possible points", x_title="Learner performance level", y_max=100.0)
        if c is not None:
            charts.append(c)
    return table, charts


def _table2(ctx: ReportContext, rows: list[dict[str, Any]], sfx: str) -> Table:
    codes = list(dict.fromkeys(str(r.get("code")) for r in rows))
    cells: dict[tuple[str, Any], dict[str, float | None]] = {}
    for r in rows:
        cell = cells.setdefault((str(r.get("model")), r.get("condition")), {})
        cell[str(r.get("code"))] = num(r.get("percent_satisfied"))
    body = tuple((m, cond, *(vals.get(c) for c in codes)) for (m, cond), vals in cells.items())
    title = f"Adaptivity sub-metrics by context condition (as in Table 2 of the tutoring study){sfx}"
    return Table(ctx.uid("tutor-table2"), title,
                 ("model", "condition", *codes), body, decimals={i: 1 for i in range(2, 2 + len(codes))},
                 caption="Percentage of scored responses meeting each criterion.")


def _anova(ctx: ReportContext, anova: dict[str, Any], sfx: str) -> list[Table]:
    effects: list[tuple[Cell, ...]] = []
    checks: list[tuple[Cell, ...]] = []
    letters: list[tuple[Cell, ...]] = []
    for dim, designs in anova.items():
        for design, res in (designs or {}).items():
            if not isinstance(res, dict):
                continue
            for e in res.get("effects") or []:
                effects.append((dim, design, e.get("term"), num(e.get("df")), num(e.get("F")), num(e.get("p")),
                                num(e.get("partial_eta_sq")), res.get("reported"), res.get("n")))
            lev, nor = res.get("levene") or {}, res.get("normality") or {}
            checks.append((dim, design, res.get("status"), num(lev.get("p")), num(nor.get("p")),
                           res.get("assumptions_met"), res.get("reported"), res.get("note")))
            posthocs = list(res.get("posthoc") or []) + [t.get("posthoc") for t in res.get("nonparametric") or []
                                                           if isinstance(t, dict) and t.get("posthoc")]
            for ph in posthocs:
                for level, mean in (ph.get("means") or {}).items():
                    letters.append((dim, design, ph.get("factor"), ph.get("method"), level, num(mean),
                                    (ph.get("n") or {}).get(level), (ph.get("letters") or {}).get(level)))
    out = []
    if effects:
        out.append(Table(ctx.uid("tutor-anova"), f"Two-way ANOVA{sfx}",
                         ("dimension", "design", "term", "df", "F", "p", "partial η²", "reported", "n"), tuple(effects),
                         decimals={3: 0, 4: 2, 5: 4, 6: 3}))
    if checks:
        out.append(Table(ctx.uid("tutor-checks"), f"ANOVA assumption checks{sfx}",
                         ("dimension", "design", "status", "Levene p", "residual normality p", "assumptions met",
                          "reported", "note"), tuple(checks), decimals={3: 4, 4: 4}))
    if letters:
        out.append(Table(ctx.uid("tutor-letters"), f"Post hoc comparisons: group means and compact letters{sfx}",
                         ("dimension", "design", "factor", "method", "level", "mean (%)", "n", "letters"),
                         tuple(letters), decimals={5: 1},
                         caption="Levels sharing a letter do not differ significantly."))
    return out


def build(ctx: ReportContext) -> AdaptivityData | None:
    """Tables 1 and 2, ANOVA tables and per-dimension charts for each run with tutoring statistics."""
    tables: list[Table] = []
    charts: list[ChartLayout] = []
    for run in ctx.runs:
        names = [ANALYSIS] + [n for n in run.analysis_names if n.startswith(ANALYSIS + "_")]
        for name in names:
            doc = run.analysis(name)
            if not isinstance(doc, dict):
                continue
            sfx = (f" · {run.label}" if ctx.multi_run else "") + (f" · {doc.get('source')}" if name != ANALYSIS else "")
            t1 = [r for r in doc.get("table1") or [] if isinstance(r, dict)]
            if t1:
                t, cs = _table1(ctx, t1, sfx)
                tables.append(t)
                charts += cs
            t2 = [r for r in doc.get("table2") or [] if isinstance(r, dict)]
            if t2:
                tables.append(_table2(ctx, t2, sfx))
            if isinstance(doc.get("anova"), dict):
                tables += _anova(ctx, doc["anova"], sfx)
    return AdaptivityData(tuple(tables), tuple(charts)) if tables else None


SECTION = ReportSection(id="adaptivity", title="Tutoring adaptivity", template="sections/adaptivity.html.j2",
                        build=build, analyses=(ANALYSIS,))
