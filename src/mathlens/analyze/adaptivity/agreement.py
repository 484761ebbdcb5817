"""Agreement between score sources (judge vs each annotator, annotators with each other).

Per rubric item, over the responses both sources scored: percent agreement, Cohen's kappa
(unweighted for two-point items, linearly weighted for the three-point Q2, Q3 and Q12) and
Krippendorff's alpha (ordinal), each with a percentile bootstrap CI over responses. Per dimension
the item-level ratings are pooled (a unit is a response x item) and the same three statistics are
computed, kappa unweighted. The statistics come from `mathlens.stats.agreement`.

`mathlens tutor agreement` writes the document `TUTOR_AGREEMENT`
(`RUN/analysis/tutor_agreement.jsonl`): one `AgreementRow` entry per pair of sources x item or
dimension, and an `AgreementSummary` naming the sources compared and the bootstrap settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.runs.documents import DocumentSpec
from mathlens.stats.agreement import cohen_kappa, krippendorff_alpha, percent_agreement
from mathlens.stats.bootstrap import CI, bootstrap_ci

from .judge import ScoreSet
from .rubric import DIMENSIONS, Rubric

Pairs = Sequence[tuple[int, int]]


class AgreementStats(BaseModel):
    """Three statistics with CIs over the units two sources both scored."""

    n: int
    percent: CI
    kappa: CI
    alpha: CI


class AgreementRow(BaseModel):
    """Agreement of sources `a` and `b` on one rubric item or one dimension (`scope`)."""

    a: str
    b: str
    scope: str
    unit: str
    stats: AgreementStats


class AgreementSummary(BaseModel):
    """The summary of `TUTOR_AGREEMENT`."""

    sources: list[str] = Field(default_factory=list)
    rubric: str = ""
    seed: int = 0
    n_resamples: int = 1000


TUTOR_AGREEMENT = DocumentSpec("tutor_agreement", 1, AgreementRow, AgreementSummary,
                               rerun="mathlens tutor agreement RUN")


def pair_agreement(pairs: Pairs, scale: Sequence[int] | None = None, weighted: bool = False,
                   seed: int = 0, n_resamples: int = 1000) -> AgreementStats:
    """Percent agreement, kappa and ordinal alpha of paired ratings, with bootstrap CIs."""
    items = list(pairs)
    labels = list(scale) if scale is not None else None
    weights: Literal["linear"] | None = "linear" if weighted else None

    def pct(ps: Pairs) -> float | None:
        return percent_agreement([p[0] for p in ps], [p[1] for p in ps])

    def kap(ps: Pairs) -> float | None:
        return cohen_kappa([p[0] for p in ps], [p[1] for p in ps], weights=weights, labels=labels)

    def alp(ps: Pairs) -> float | None:
        return krippendorff_alpha([[p[0] for p in ps], [p[1] for p in ps]], level="ordinal")

    return AgreementStats(
        n=len(items),
        percent=bootstrap_ci(items, stat=pct, n_resamples=n_resamples, seed=seed),
        kappa=bootstrap_ci(items, stat=kap, n_resamples=n_resamples, seed=seed),
        alpha=bootstrap_ci(items, stat=alp, n_resamples=n_resamples, seed=seed),
    )


def _ok(scores: ScoreSet) -> dict[tuple[str, str], int]:
    return {(s.record.key, s.item_id): s.score for s in scores.scores if s.status == "ok" and s.score is not None}


def compare(a: ScoreSet, b: ScoreSet, rubric: Rubric, seed: int = 0, n_resamples: int = 1000) -> list[AgreementRow]:
    """Item and dimension agreement between two score sources."""
    sa, sb = _ok(a), _ok(b)
    both = sorted(set(sa) & set(sb))
    rows = []
    for item in rubric.items:
        pairs = [(sa[k], sb[k]) for k in both if k[1] == item.id]
        if not pairs:
            continue
        rows.append(AgreementRow(a=a.source, b=b.source, scope=item.id, unit="response", stats=pair_agreement(
            pairs, scale=item.values, weighted=len(item.values) > 2, seed=seed, n_resamples=n_resamples)))
    for dim in DIMENSIONS:
        ids = {i.id for i in rubric.by_dimension(dim)}
        pairs = [(sa[k], sb[k]) for k in both if k[1] in ids]
        if pairs:
            rows.append(AgreementRow(a=a.source, b=b.source, scope=dim, unit="response x item",
                                     stats=pair_agreement(pairs, seed=seed, n_resamples=n_resamples)))
    return rows


def agreement_report(sources: Sequence[ScoreSet], rubric: Rubric, seed: int = 0,
                     n_resamples: int = 1000) -> list[AgreementRow]:
    """Every pair of sources (judge first when present)."""
    rows: list[AgreementRow] = []
    for a, b in combinations(sources, 2):
        rows += compare(a, b, rubric, seed=seed, n_resamples=n_resamples)
    return rows
