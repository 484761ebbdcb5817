"""Dimension percentages, the seed's Tables 1 and 2, and the two-way ANOVAs over them.

A response's score on a dimension is the share of the dimension's possible points it earned:
100 * sum(item scores) / sum(item maxima). Items scored -1 (Q2, Q3 "responds negatively") take
points away, so an adaptivity percentage can fall below zero. A response counts in Table 1 and the
ANOVAs only when every item of the dimension was scored (`complete`); partly or wholly unscored
responses are counted and reported, not averaged in.

Table 1: mean dimension percentage by model x learner performance level (with bootstrap CIs).
Table 2: for each adaptivity sub-metric (CK, CCS, DL, LA, SE, Expl, Exam, Prac, SBS), the
percentage of scored responses meeting the criterion (score >= 1), by context condition and model.
Table 2 by learner profile (`table2_profiles`): the same sub-metrics for each learner (the record's
variant of kind "profile"), by model and context condition and pooled over the conditions, counted
over the applicable cases only. A response is an applicable case of a sub-metric when the tutor was
told what the criterion asks it to adapt to (the learner's self-description for CK, DL, LA and SE;
the learner's grade, in the self-description or the objectives prompt, for CCS; nothing for the
complexity items) and, for LA and SE, when the learner stated an attitude or a confidence that leaves
something to improve (not "likes" math, not "high" confidence). The rule is each item's `applies`
in the rubric file; this is how we read the study's "applicable cases" (see docs/adaptivity.md).

The tables read the judging core's entries (`Judgement`s of the judge or of an annotator, grouped
per grader in a `ScoreSet`). The document `TUTOR_STATS` (`RUN/analysis/tutor_stats.jsonl`) keeps
one `TutorStats` per score source (the judge, each annotator) in its summary, and one
`DimensionScore` entry per source x response x dimension, each naming its run record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.runs.documents import DocumentSpec, RecordRef
from mathlens.stats.anova import AnovaResult, two_way_anova
from mathlens.stats.bootstrap import CI, bootstrap_ci

from .design import Cell
from .judge import ScoreSet
from .profiles import PERFORMANCE_LEVELS
from .rubric import DIMENSIONS, Rubric


class DimensionScore(BaseModel):
    """One response on one dimension, from one score source."""

    record: RecordRef
    source: str
    condition: int
    profile_id: str
    performance: str
    grade: int
    question_id: str
    dimension: str
    points: int
    possible: int
    percent: float | None
    status: Literal["complete", "partial", "unscored"]
    n_items: int
    n_scored: int


class Table1Row(BaseModel):
    model: str
    performance: str
    dimension: str
    mean_percent: CI
    n: int
    excluded: int


class Table2Row(BaseModel):
    model: str
    condition: int
    code: str
    item_id: str
    percent_satisfied: float | None
    n: int


class Table2ProfileRow(BaseModel):
    """One adaptivity sub-metric for one learner profile, over its applicable cases.

    `model` `all` pools the models; `condition` None pools the context conditions. `scored` counts
    the responses with a score on the item, `applicable` those of them that are applicable cases,
    `satisfied` the applicable ones meeting the criterion (score >= 1); `percent_satisfied` is
    100 * satisfied / applicable, None when no case is applicable."""

    model: str
    condition: int | None
    profile: str
    grade: int
    performance: str
    attitude: str
    self_efficacy: str
    code: str
    item_id: str
    scored: int
    applicable: int
    satisfied: int
    percent_satisfied: float | None


class TutorStats(BaseModel):
    """Tables 1 and 2 and the ANOVAs for one score source (what `mathlens tutor stats` prints)."""

    source: str
    rubric: str
    alpha: float = 0.05
    seed: int = 0
    responses: int
    excluded: dict[str, int]
    table1: list[Table1Row]
    table2: list[Table2Row]
    table2_profiles: list[Table2ProfileRow] = Field(
        default_factory=list, description="Table 2 split by learner profile, over applicable cases")
    anova: dict[str, dict[str, AnovaResult]] = Field(
        default_factory=dict, description="dimension -> design ('performance x model', ...) -> result")

    @property
    def judged(self) -> bool:
        """The scores came from a judge model (not from an annotator's worksheet)."""
        return self.source.startswith("judge:")


class TutorStatsSummary(BaseModel):
    """The summary of `TUTOR_STATS`: the statistics of every score source computed so far."""

    sources: list[TutorStats] = Field(default_factory=list)

    def get(self, source: str) -> TutorStats | None:
        """The statistics of `source` (`judge` for the judge, whatever its model, or `human:<name>`)."""
        return next((s for s in self.sources if slot_of(s.source) == slot_of(source)), None)


def slot_of(source: str) -> str:
    """Which statistics a source replaces: `judge` for any judge model, else the source itself."""
    return "judge" if source == "judge" or source.startswith("judge:") else source


#: Version 2 added `table2_profiles` (Table 2 by learner profile, over applicable cases).
TUTOR_STATS = DocumentSpec("tutor_stats", 2, DimensionScore, TutorStatsSummary, rerun="mathlens tutor stats RUN")


def dimension_scores(cells: Sequence[Cell], scores: ScoreSet, rubric: Rubric) -> list[DimensionScore]:
    """Every response x dimension with its points and completeness."""
    got = scores.values()
    out = []
    for cell in cells:
        for dim in DIMENSIONS:
            items = rubric.by_dimension(dim)
            scored = [(i, got[(cell.key, i.id)]) for i in items
                      if (cell.key, i.id) in got and got[(cell.key, i.id)].value is not None]
            points = sum(int(s.value or 0) for _, s in scored)
            possible = sum(i.max_value for i, _ in scored)
            status: Literal["complete", "partial", "unscored"] = (
                "complete" if len(scored) == len(items) else "partial" if scored else "unscored")
            out.append(DimensionScore(
                record=cell.ref, source=scores.grader, condition=cell.condition, profile_id=cell.profile.id,
                performance=cell.profile.performance, grade=cell.profile.grade, question_id=cell.question.id,
                dimension=dim, points=points, possible=possible,
                percent=100.0 * points / possible if status == "complete" and possible else None,
                status=status, n_items=len(items), n_scored=len(scored)))
    return out


def table1(rows: Sequence[DimensionScore], seed: int = 0, n_resamples: int = 2000) -> list[Table1Row]:
    """Mean dimension percentage by model x performance level, complete responses only."""
    groups: dict[tuple[str, str, str], list[DimensionScore]] = defaultdict(list)
    for r in rows:
        groups[(r.record.model, r.performance, r.dimension)].append(r)
    out = []
    for (model, perf, dim), rs in sorted(groups.items()):
        vals = [r.percent for r in rs if r.percent is not None]
        out.append(Table1Row(model=model, performance=perf, dimension=dim,
                             mean_percent=bootstrap_ci(vals, n_resamples=n_resamples, seed=seed),
                             n=len(vals), excluded=len(rs) - len(vals)))
    return out


def table2(cells: Sequence[Cell], scores: ScoreSet, rubric: Rubric) -> list[Table2Row]:
    """Percentage meeting each adaptivity criterion by model and condition (model `all` pools them)."""
    by_key = {c.key: c for c in cells}
    counts: dict[tuple[str, int, str], list[bool]] = defaultdict(list)
    items = {i.id: i for i in rubric.by_dimension("adaptivity")}
    for judgement, s in scores.unit_scores():
        cell = by_key.get(judgement.record.key)
        item = items.get(s.unit)
        if cell is None or item is None or s.value is None:
            continue
        hit = item.satisfied(s.value)
        counts[(cell.model, cell.condition, item.id)].append(hit)
        counts[("all", cell.condition, item.id)].append(hit)
    conditions = sorted({c.condition for c in cells})
    models = [*sorted({c.model for c in cells}), "all"]
    out = []
    for model in models:
        for cond in conditions:
            for item in items.values():
                hits = counts.get((model, cond, item.id), [])
                out.append(Table2Row(model=model, condition=cond, code=item.code, item_id=item.id,
                                     percent_satisfied=100.0 * sum(hits) / len(hits) if hits else None, n=len(hits)))
    return out


def table2_by_profile(cells: Sequence[Cell], scores: ScoreSet, rubric: Rubric) -> list[Table2ProfileRow]:
    """Each adaptivity sub-metric per learner profile, by model (and `all`) and by context condition
    (and None, pooled), over the applicable cases (`RubricItem.applicable`). Every profile and
    condition of the cells has its rows, with zero counts where nothing was scored or applicable."""
    by_key = {c.key: c for c in cells}
    items = {i.id: i for i in rubric.by_dimension("adaptivity")}
    # (model, condition, profile, item) -> [scored, applicable, satisfied]
    counts: dict[tuple[str, int | None, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for judgement, s in scores.unit_scores():
        cell = by_key.get(judgement.record.key)
        item = items.get(s.unit)
        if cell is None or item is None or s.value is None:
            continue
        case = item.applicable(cell.profile, cell.condition)
        hit = case and item.satisfied(s.value)
        for model in (cell.model, "all"):
            for cond in (cell.condition, None):
                c = counts[(model, cond, cell.profile.id, item.id)]
                c[0] += 1
                c[1] += int(case)
                c[2] += int(hit)
    profiles = sorted({c.profile.id: c.profile for c in cells}.values(),
                      key=lambda p: (p.grade, PERFORMANCE_LEVELS.index(p.performance), p.id))
    pairs = {(c.profile.id, c.condition) for c in cells}
    conditions: list[int | None] = [*sorted({c.condition for c in cells}), None]
    models = [*sorted({c.model for c in cells}), "all"]
    out = []
    for model in models:
        for p in profiles:
            for cond in conditions:
                if cond is not None and (p.id, cond) not in pairs:
                    continue
                for item in items.values():
                    scored, applicable, satisfied = counts.get((model, cond, p.id, item.id), [0, 0, 0])
                    out.append(Table2ProfileRow(
                        model=model, condition=cond, profile=p.id, grade=p.grade, performance=p.performance,
                        attitude=p.attitude, self_efficacy=p.self_efficacy, code=item.code, item_id=item.id,
                        scored=scored, applicable=applicable, satisfied=satisfied,
                        percent_satisfied=100.0 * satisfied / applicable if applicable else None))
    return out


def anovas(rows: Sequence[DimensionScore], alpha: float = 0.05) -> dict[str, dict[str, AnovaResult]]:
    """Per dimension: performance x model, and performance x condition."""
    out: dict[str, dict[str, AnovaResult]] = {}
    for dim in DIMENSIONS:
        data = [{"percent": r.percent, "performance": r.performance, "model": r.record.model,
                 "condition": f"c{r.condition}"}
                for r in rows if r.dimension == dim and r.percent is not None]
        if not data:
            continue
        out[dim] = {
            "performance x model": two_way_anova(data, "percent", "performance", "model", alpha=alpha),
            "performance x condition": two_way_anova(data, "percent", "performance", "condition", alpha=alpha),
        }
    return out


def tutor_stats(cells: Sequence[Cell], scores: ScoreSet, rubric: Rubric, alpha: float = 0.05,
                seed: int = 0) -> tuple[TutorStats, list[DimensionScore]]:
    """Tables 1 and 2 (with Table 2 by learner profile) and the ANOVAs for one score source, with the
    per-response rows behind them."""
    rows = dimension_scores(cells, scores, rubric)
    excluded: dict[str, int] = {}
    for r in rows:
        if r.status != "complete":
            excluded[r.dimension] = excluded.get(r.dimension, 0) + 1
    stats = TutorStats(source=scores.grader, rubric=rubric.name, alpha=alpha, seed=seed, responses=len(cells),
                       excluded=excluded, table1=table1(rows, seed=seed), table2=table2(cells, scores, rubric),
                       table2_profiles=table2_by_profile(cells, scores, rubric), anova=anovas(rows, alpha))
    return stats, rows
