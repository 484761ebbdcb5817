"""The tutoring study's tables (seed 003) from `tutor_stats`, one set per score source.

* Table 1: mean dimension percentage (adaptivity, correctness, quality) for each model and learner
  performance level, with its bootstrap interval. Adaptivity items scored -1 can take a percentage
  below zero.
* Table 2: the adaptivity sub-metrics as rows, grouped by aspect as in the study (cognitive: CK,
  CCS, DL; motivational: LA, SE; complexity: Expl, Exam, Prac, SBS), and for each model and context
  condition G1-G4 the percentage of scored responses meeting the criterion.
* Table 2 by learner profile: the same sub-metrics as rows within each learner profile, and for
  each model and context condition (and pooled over the conditions, "all") the percentage of the
  applicable cases meeting the criterion and the number of applicable cases (n). Which responses
  are applicable cases of a sub-metric is the rubric's `applies` rule (docs/adaptivity.md).
* Two-way ANOVA per dimension and design (performance x model, performance x condition): each term's
  df, F, p and partial eta squared, with the residual df; the assumption checks (Levene,
  residual normality) and which analysis is reported; the post hoc pairwise comparisons (Tukey HSD,
  or Dunn/Holm when the rank-based fallback is reported); and the group means with compact letters.

The judge's tables have plain ids (``tutoring-table1-dimensions``); an annotator's add the source
(``tutoring-table1-dimensions-human-alice``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mathlens.analyze.adaptivity.rubric import DIMENSIONS, load_rubric
from mathlens.analyze.adaptivity.tables import (
    TUTOR_STATS,
    Table1Row,
    Table2ProfileRow,
    Table2Row,
    TutorStats,
    TutorStatsSummary,
)
from mathlens.errors import UserError
from mathlens.report.export.builder import Col, Layout, TableBuilder, only, slug
from mathlens.report.export.table import Cell, Column, Estimate
from mathlens.report.loader import RunData
from mathlens.runs.documents import Document
from mathlens.stats.anova import AnovaResult, Pair, PostHoc

PERFORMANCE_ORDER = ("high", "intermediate", "low")
#: The study's grouping of the adaptivity sub-metrics (Table 2's caption), used when the run's
#: rubric version cannot be loaded to read each item's aspect.
SEED_ASPECTS = {"CK": "cognitive", "CCS": "cognitive", "DL": "cognitive", "LA": "motivational",
                "SE": "motivational", "Expl": "complexity", "Exam": "complexity", "Prac": "complexity",
                "SBS": "complexity"}
ASPECT_ORDER = ("cognitive", "motivational", "complexity")

T = TypeVar("T")


def _sources(doc: Document[TutorStatsSummary]) -> Iterator[tuple[TutorStats, str, str]]:
    """Each score source with its table-id suffix and title suffix (empty for the judge)."""
    for st in doc.summary.sources:
        yield st, ("" if st.judged else "-" + slug(st.source)), ("" if st.judged else f" ({st.source})")


def _per_source(make: Callable[[TutorStats, str, str], Layout[Any] | None]) -> Callable[
        [RunData, Document[TutorStatsSummary]], list[Layout[Any]]]:
    def build(run: RunData, doc: Document[TutorStatsSummary]) -> list[Layout[Any]]:
        return [t for st, ids, title in _sources(doc) if (t := make(st, ids, title)) is not None]
    return build


def _rank(value: str, order: tuple[str, ...]) -> tuple[int, str]:
    return (order.index(value), "") if value in order else (len(order), value)


# -- Table 1 -----------------------------------------------------------------------------------

def _table1(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    if not st.table1:
        return None
    cells: dict[tuple[str, str], dict[str, Table1Row]] = {}
    for r in st.table1:
        cells.setdefault((r.model, r.performance), {})[r.dimension] = r
    keys = sorted(cells, key=lambda k: (k[0], _rank(k[1], PERFORMANCE_ORDER)))
    dims = [d for d in DIMENSIONS if any(d in v for v in cells.values())]

    def mean_of(dim: str) -> Callable[[tuple[str, str]], Cell]:
        def get(key: tuple[str, str]) -> Cell:
            r = cells[key].get(dim)
            if r is None:
                return None
            ci = r.mean_percent
            return Estimate.interval(ci.estimate, ci.low, ci.high, r.n)
        return get

    cols: list[Col[tuple[str, str]]] = [
        Col(Column("Model"), lambda k: k[0]),
        Col(Column("Learner performance"), lambda k: k[1]),
        *(Col(Column(f"{d.capitalize()} (%)", 1), mean_of(d)) for d in dims),
    ]
    caption = ("Mean percentage of the dimension's possible points (Table 1 of the tutoring study), over responses "
               "whose every item of the dimension was scored, with 95% bootstrap intervals. Adaptivity items Q2-Q3 "
               "score -1 for a negative response, so adaptivity can fall below 0%.")
    return Layout(f"Dimension scores by model and learner performance{title}", cols, keys, caption, groups=1,
                  suffix=ids)


# -- Table 2 -----------------------------------------------------------------------------------

def _aspects(st: TutorStats) -> dict[str, str]:
    """Item code -> aspect, from the run's rubric version when it can be loaded, else the study's."""
    try:
        rubric = load_rubric(st.rubric)
    except UserError:
        return dict(SEED_ASPECTS)
    return {i.code: i.aspect for i in rubric.items if i.aspect is not None}


@dataclass(frozen=True)
class _Metric:
    aspect: str
    code: str
    item_id: str

    @property
    def order(self) -> tuple[tuple[int, str], int, str]:
        """The study's order: by aspect, then by item number."""
        return _rank(self.aspect, ASPECT_ORDER), int(self.item_id[1:]) if self.item_id[1:].isdigit() else 0, self.code


def _models(rows: Sequence[Table2Row] | Sequence[Table2ProfileRow]) -> list[str]:
    """The models of a Table 2's columns, the pooled "all" last (dropped when one model is pooled)."""
    models = sorted({r.model for r in rows}, key=lambda m: (m == "all", m))
    if len(models) == 2 and "all" in models:
        models.remove("all")  # one model: the pooled columns would repeat it
    return models


def _header(models: list[str], model: str, group: str) -> str:
    """A column of `model` and condition `group` (the model is named only when there are several)."""
    return group if len(models) == 1 else f"{'all models' if model == 'all' else model} {group}"


def _only_model(models: list[str]) -> str:
    """The caption's note naming the one model the columns leave unnamed."""
    return f" Model: {models[0]}." if len(models) == 1 else ""


def _table2(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    if not st.table2:
        return None
    aspects = _aspects(st)
    values: dict[tuple[str, str, int], Table2Row] = {(r.code, r.model, r.condition): r for r in st.table2}
    models = _models(st.table2)
    conditions = sorted({r.condition for r in st.table2})
    metrics = sorted({_Metric(aspects.get(r.code, "other"), r.code, r.item_id) for r in st.table2},
                     key=lambda m: m.order)

    def cell(model: str, condition: int) -> Callable[[_Metric], Cell]:
        def get(m: _Metric) -> Cell:
            r = values.get((m.code, model, condition))
            return r.percent_satisfied if r is not None else None
        return get

    cols: list[Col[_Metric]] = [
        Col(Column("Aspect"), lambda m: m.aspect.capitalize()),
        Col(Column("Sub-metric"), lambda m: m.code),
        *(Col(Column(_header(models, mo, f"G{c}"), 1), cell(mo, c)) for mo in models for c in conditions),
    ]
    caption = ("Percentage of scored responses meeting each adaptivity criterion, by context condition G1-G4 "
               f"(Table 2 of the tutoring study).{_only_model(models)}")
    return Layout(f"Adaptivity sub-metrics by context condition{title}", cols, metrics, caption, groups=1, suffix=ids)


# -- Table 2 by learner profile ----------------------------------------------------------------

@dataclass(frozen=True)
class _ProfileMetric(_Metric):
    profile: str
    described: str


def _described(r: Table2ProfileRow) -> str:
    return f"grade {r.grade}, {r.performance}; attitude: {r.attitude}; self-efficacy: {r.self_efficacy}"


def _table2_profiles(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    if not st.table2_profiles:
        return None
    aspects = _aspects(st)
    values: dict[tuple[str, str, str, int | None], Table2ProfileRow] = {
        (r.profile, r.code, r.model, r.condition): r for r in st.table2_profiles}
    models = _models(st.table2_profiles)
    conditions: list[int | None] = [*sorted({r.condition for r in st.table2_profiles if r.condition is not None}),
                                    None]
    order = list(dict.fromkeys(r.profile for r in st.table2_profiles))
    metrics = sorted({_ProfileMetric(aspects.get(r.code, "other"), r.code, r.item_id, r.profile, _described(r))
                      for r in st.table2_profiles},
                     key=lambda m: (order.index(m.profile), m.order))

    def cell(model: str, condition: int | None, count: bool) -> Callable[[_ProfileMetric], Cell]:
        def get(m: _ProfileMetric) -> Cell:
            r = values.get((m.profile, m.code, model, condition))
            if r is None:
                return None
            return r.applicable if count else r.percent_satisfied
        return get

    cols: list[Col[_ProfileMetric]] = [
        Col(Column("Learner"), lambda m: m.profile),
        Col(Column("Profile"), lambda m: m.described),
        Col(Column("Aspect"), lambda m: m.aspect.capitalize()),
        Col(Column("Sub-metric"), lambda m: m.code),
    ]
    for mo in models:
        for c in conditions:
            header = _header(models, mo, "All" if c is None else f"G{c}")
            cols += [Col(Column(header, 1), cell(mo, c, False)),
                     Col(Column(f"{header} n", 0), cell(mo, c, True))]
    caption = ("Table 2 of the tutoring study split by learner profile: the percentage of applicable cases meeting "
               "each adaptivity criterion by context condition G1-G4 and pooled over the conditions (All), with the "
               "number of applicable cases (n). A response is an applicable case when the tutor was told what the "
               "criterion asks it to adapt to (the learner's self-description, G2 and G4, for CK, DL, LA and SE; "
               "the learner's grade, G2-G4, for CCS; nothing for Expl, Exam, Prac and SBS) and, for LA and SE, when "
               "the learner does not say they like math or are confident. – (blank in CSV): no applicable case."
               f"{_only_model(models)}")
    return Layout(f"Adaptivity sub-metrics by learner profile{title}", cols, metrics, caption, groups=3, suffix=ids)


# -- ANOVA -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Term:
    dimension: str
    design: str
    term: str
    df: float | None
    F: float | None
    p: float | None
    eta: float | None
    reported: str


def _terms(st: TutorStats) -> list[_Term]:
    out = []
    for dim, designs in st.anova.items():
        for design, res in designs.items():
            out += [_Term(dim, design, e.term, e.df, e.F, e.p, e.partial_eta_sq, res.reported) for e in res.effects]
            if res.effects and res.residual_df is not None:
                out.append(_Term(dim, design, "residual", res.residual_df, None, None, None, res.reported))
    return out


def _anova(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    items = _terms(st)
    if not items:
        return None
    cols: list[Col[_Term]] = [
        Col(Column("Dimension"), lambda t: t.dimension),
        Col(Column("Design"), lambda t: t.design),
        Col(Column("Term"), lambda t: t.term),
        Col(Column("df", 0), lambda t: t.df),
        Col(Column("F", 2), lambda t: t.F),
        Col(Column("p", 3, p_value=True), lambda t: t.p),
        Col(Column("Partial η²", 3), lambda t: t.eta),
        Col(Column("Reported"), lambda t: t.reported, only("anova")),
    ]
    caption = ("Two-way ANOVA of the dimension percentage per design (type II sums of squares). Where an "
               "assumption check fails the rank-based tests are reported instead (column Reported, shown when "
               "that happens; see the assumption checks).")
    return Layout(f"Two-way ANOVA{title}", cols, items, caption, groups=2, suffix=ids)


def _results(st: TutorStats) -> list[tuple[str, str, AnovaResult]]:
    return [(dim, design, res) for dim, designs in st.anova.items() for design, res in designs.items()]


def _checks(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    items = _results(st)
    if not items:
        return None
    cols: list[Col[tuple[str, str, AnovaResult]]] = [
        Col(Column("Dimension"), lambda x: x[0]),
        Col(Column("Design"), lambda x: x[1]),
        Col(Column("n", 0), lambda x: x[2].n),
        Col(Column("Levene p", 3, p_value=True), lambda x: x[2].levene.p if x[2].levene else None),
        Col(Column("Normality p", 3, p_value=True), lambda x: x[2].normality.p if x[2].normality else None),
        Col(Column("Assumptions met"), lambda x: None if x[2].assumptions_met is None
            else ("yes" if x[2].assumptions_met else "no")),
        Col(Column("Reported"), lambda x: x[2].reported),
    ]
    caption = ("Assumption checks of each two-way ANOVA: equal variances (Levene, median-centred) and normal "
               "residuals (Shapiro-Wilk); when one fails the rank-based analysis is reported.")
    return Layout(f"ANOVA assumption checks{title}", cols, items, caption, groups=1, suffix=ids)


def _posthoc_rows(st: TutorStats, part: Callable[[PostHoc], Iterable[T]]) -> list[tuple[str, str, PostHoc, T]]:
    """(dimension, design, post hoc test, part) for each part of every post hoc test of the source."""
    return [(dim, design, ph, x) for dim, design, res in _results(st) for ph in res.posthocs() for x in part(ph)]


def _posthoc_columns() -> list[Col[tuple[str, str, PostHoc, Any]]]:
    """The columns naming a post hoc row's dimension, design and factor."""
    return [
        Col(Column("Dimension"), lambda x: x[0]),
        Col(Column("Design"), lambda x: x[1]),
        Col(Column("Factor"), lambda x: x[2].factor),
    ]


def _pairs(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    items = _posthoc_rows(st, lambda ph: ph.pairs)
    if not items:
        return None
    cols: list[Col[tuple[str, str, PostHoc, Pair]]] = [
        *_posthoc_columns(),
        Col(Column("Method"), lambda x: x[2].method, only("tukey-hsd")),
        Col(Column("Comparison"), lambda x: f"{x[3].b} - {x[3].a}"),
        Col(Column("Mean difference", 2), lambda x: Estimate.interval(x[3].mean_diff, x[3].low, x[3].high)),
        Col(Column("Adjusted p", 3, p_value=True), lambda x: x[3].p_adj),
        Col(Column("Significant"), lambda x: "yes" if x[3].reject else "no"),
    ]
    caption = ("Pairwise post hoc comparisons of each factor's groups (Tukey HSD; Dunn with Holm adjustment for "
               "the rank-based fallback): mean of the second group minus the first, with its 95% interval.")
    return Layout(f"Post hoc pairwise comparisons{title}", cols, items, caption, groups=3, suffix=ids)


def _letters(st: TutorStats, ids: str, title: str) -> Layout[Any] | None:
    items = _posthoc_rows(st, lambda ph: ph.means)
    if not items:
        return None
    cols: list[Col[tuple[str, str, PostHoc, str]]] = [
        *_posthoc_columns(),
        Col(Column("Group"), lambda x: x[3]),
        Col(Column("Mean (%)", 1), lambda x: x[2].means[x[3]]),
        Col(Column("n", 0), lambda x: x[2].n.get(x[3])),
        Col(Column("Letters"), lambda x: x[2].letters.get(x[3])),
    ]
    caption = "Group means with compact letters: groups sharing a letter do not differ significantly."
    return Layout(f"Post hoc group means and compact letters{title}", cols, items, caption, groups=3, suffix=ids)


TABLE1 = TableBuilder("tutoring-table1-dimensions", "Dimension scores by learner performance (tutoring Table 1)",
                      TUTOR_STATS, _per_source(_table1))
TABLE2 = TableBuilder("tutoring-table2-adaptivity", "Adaptivity sub-metrics by condition (tutoring Table 2)",
                      TUTOR_STATS, _per_source(_table2))
TABLE2_PROFILES = TableBuilder("tutoring-table2-profiles",
                               "Adaptivity sub-metrics by learner profile, applicable cases (tutoring Table 2 split)",
                               TUTOR_STATS, _per_source(_table2_profiles))
ANOVA = TableBuilder("tutoring-anova", "Two-way ANOVA", TUTOR_STATS, _per_source(_anova))
CHECKS = TableBuilder("tutoring-anova-checks", "ANOVA assumption checks", TUTOR_STATS, _per_source(_checks))
POSTHOC = TableBuilder("tutoring-posthoc", "Post hoc pairwise comparisons (Tukey HSD)", TUTOR_STATS,
                       _per_source(_pairs))
LETTERS = TableBuilder("tutoring-letters", "Post hoc group means and compact letters", TUTOR_STATS,
                       _per_source(_letters))
