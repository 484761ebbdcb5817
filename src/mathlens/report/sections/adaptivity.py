"""Tutoring adaptivity (`analysis/tutor_stats.jsonl`, read through `TUTOR_STATS`): dimension
percentages by model and learner performance (Table 1 of the tutoring study), adaptivity
sub-metrics by context condition (Table 2), the same sub-metrics for each learner profile over the
applicable cases only (with their counts), and the two-way ANOVAs with assumption checks and Tukey
HSD compact letters, for the judge's scores and for each annotator whose statistics were computed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mathlens.analyze.adaptivity.tables import TUTOR_STATS, Table1Row, Table2ProfileRow, Table2Row, TutorStats
from mathlens.report.charts import ChartLayout, Series, grouped_bars
from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.stats.anova import AnovaResult
from mathlens.stats.bootstrap import CI

Triple = tuple[float | None, float | None, float | None]
NONE3: Triple = (None, None, None)


@dataclass(frozen=True)
class AdaptivityData:
    tables: tuple[Table, ...]
    charts: tuple[ChartLayout, ...]


def _ci(v: CI) -> Triple:
    return v.estimate, v.low, v.high


def _table1(ctx: ReportContext, rows: Sequence[Table1Row], sfx: str) -> tuple[Table, list[ChartLayout]]:
    body = tuple((r.dimension, r.model, r.performance, *_ci(r.mean_percent), r.n, r.excluded) for r in rows)
    title = f"Dimension scores by model and learner performance (as in Table 1 of the tutoring study){sfx}"
    table = Table(ctx.uid("tutor-table1"), title,
                  ("dimension", "model", "performance", "mean (% of possible points)", "CI low", "CI high",
                   "responses", "excluded (not fully scored)"), body, decimals={3: 1, 4: 1, 5: 1},
                  caption="Adaptivity items Q2–Q3 score −1 for a negative response, so that dimension can fall "
                          "below 0%.")
    charts = []
    for dim in dict.fromkeys(r.dimension for r in rows):
        sub = [r for r in rows if r.dimension == dim]
        cats = list(dict.fromkeys(r.performance for r in sub))
        models = list(dict.fromkeys(r.model for r in sub))
        by = {(r.model, r.performance): _ci(r.mean_percent) for r in sub}
        series = [Series(m, tuple(by.get((m, c), NONE3)[0] for c in cats),
                         lows=tuple(by.get((m, c), NONE3)[1] for c in cats),
                         highs=tuple(by.get((m, c), NONE3)[2] for c in cats)) for m in models]
        c = grouped_bars(ctx.uid("tutor-chart", dim), f"{dim.capitalize()} by learner performance{sfx}", cats, series,
                         y_title="% of possible points", x_title="Learner performance level", y_max=100.0)
        if c is not None:
            charts.append(c)
    return table, charts


def _table2(ctx: ReportContext, rows: Sequence[Table2Row], sfx: str) -> Table:
    codes = list(dict.fromkeys(r.code for r in rows))
    cells: dict[tuple[str, int], dict[str, float | None]] = {}
    for r in rows:
        cells.setdefault((r.model, r.condition), {})[r.code] = r.percent_satisfied
    body = tuple((m, cond, *(vals.get(c) for c in codes)) for (m, cond), vals in cells.items())
    title = f"Adaptivity sub-metrics by context condition (as in Table 2 of the tutoring study){sfx}"
    return Table(ctx.uid("tutor-table2"), title,
                 ("model", "condition", *codes), body, decimals={i: 1 for i in range(2, 2 + len(codes))},
                 caption="Percentage of scored responses meeting each criterion.")


PROFILE_CAPTION = (
    "Percentage of applicable cases meeting each criterion, per learner profile, with the number of applicable "
    "cases (n). A case is applicable when the tutor was told what the criterion asks it to adapt to: the learner's "
    "self-description (context conditions 2 and 4) for CK, DL, LA and SE, the learner's grade (conditions 2-4) for "
    "CCS, nothing for Expl, Exam, Prac and SBS; LA and SE count only learners who do not say they like math or are "
    "confident. – marks a cell without applicable cases.")


def _profile_text(r: Table2ProfileRow) -> str:
    return f"grade {r.grade}, {r.performance}, attitude {r.attitude}, self-efficacy {r.self_efficacy}"


def _table2_profiles(ctx: ReportContext, rows: Sequence[Table2ProfileRow], sfx: str) -> Table:
    """Rows model x learner x sub-metric; per context condition (and pooled) the percentage and n."""
    models = list(dict.fromkeys(r.model for r in rows))
    if len(models) == 2 and "all" in models:
        models.remove("all")  # one model: its pooled rows would repeat it
    conditions = sorted({r.condition for r in rows if r.condition is not None})
    cells: dict[tuple[str, str, str], dict[int | None, Table2ProfileRow]] = {}
    for r in rows:
        if r.model in models:
            cells.setdefault((r.model, r.profile, r.code), {})[r.condition] = r
    body = []
    for (model, profile, code), by_cond in cells.items():
        first = next(iter(by_cond.values()))
        values: list[Cell] = []
        for cond in [*conditions, None]:
            got = by_cond.get(cond)
            values += [got.percent_satisfied, got.applicable] if got is not None else [None, None]
        body.append((model, profile, _profile_text(first), code, *values))
    headers = [h for c in [*(f"G{c}" for c in conditions), "all conditions"] for h in (f"{c} %", f"{c} n")]
    title = f"Adaptivity sub-metrics by learner profile, applicable cases only (Table 2 split by learner){sfx}"
    return Table(ctx.uid("tutor-table2-profiles"), title, ("model", "learner", "profile", "sub-metric", *headers),
                 tuple(body), decimals={i: 1 for i in range(4, 4 + len(headers), 2)}, caption=PROFILE_CAPTION)


def _anova(ctx: ReportContext, anova: dict[str, dict[str, AnovaResult]], sfx: str) -> list[Table]:
    effects: list[tuple[Cell, ...]] = []
    checks: list[tuple[Cell, ...]] = []
    letters: list[tuple[Cell, ...]] = []
    for dim, designs in anova.items():
        for design, res in designs.items():
            for e in res.effects:
                effects.append((dim, design, e.term, e.df, e.F, e.p, e.partial_eta_sq, res.reported, res.n))
            checks.append((dim, design, res.status, res.levene.p if res.levene else None,
                           res.normality.p if res.normality else None, res.assumptions_met, res.reported,
                           res.note))
            for ph in res.posthocs():
                for level, mean in ph.means.items():
                    letters.append((dim, design, ph.factor, ph.method, level, mean, ph.n.get(level),
                                    ph.letters.get(level)))
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


def _source_tables(ctx: ReportContext, st: TutorStats, sfx: str) -> tuple[list[Table], list[ChartLayout]]:
    tables: list[Table] = []
    charts: list[ChartLayout] = []
    if st.table1:
        t, cs = _table1(ctx, st.table1, sfx)
        tables.append(t)
        charts.extend(cs)
    if st.table2:
        tables.append(_table2(ctx, st.table2, sfx))
    if st.table2_profiles:
        tables.append(_table2_profiles(ctx, st.table2_profiles, sfx))
    tables.extend(_anova(ctx, st.anova, sfx))
    return tables, charts


def build(ctx: ReportContext) -> AdaptivityData | None:
    """Tables 1 and 2, Table 2 by learner profile, ANOVA tables and per-dimension charts for each run
    and score source with tutoring statistics (the judge's first, then each annotator's, named in the titles)."""
    tables: list[Table] = []
    charts: list[ChartLayout] = []
    for run in ctx.runs:
        doc = run.document(TUTOR_STATS)
        if doc is None:
            continue
        for st in doc.summary.sources:
            sfx = (f" · {run.label}" if ctx.multi_run else "") + ("" if st.judged else f" · {st.source}")
            t, cs = _source_tables(ctx, st, sfx)
            tables.extend(t)
            charts.extend(cs)
    return AdaptivityData(tuple(tables), tuple(charts)) if tables else None


SECTION = ReportSection(id="adaptivity", title="Tutoring adaptivity", template="sections/adaptivity.html.j2",
                        build=build, analyses=(TUTOR_STATS.name,))
