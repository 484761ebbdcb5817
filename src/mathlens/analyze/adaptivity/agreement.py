"""Agreement between graders of the tutoring rubric (judge vs each annotator, annotators with each
other), computed by the judging core (`mathlens.analyze.judging.agreement`).

Per rubric item, over the responses both graders scored: percent agreement, Cohen's kappa
(unweighted for two-point items, linearly weighted for the three-point Q2, Q3 and Q12) and
Krippendorff's alpha (ordinal), each with a percentile bootstrap CI over responses. Per dimension
the item-level ratings are pooled (a unit is a response x item) and the same three statistics are
computed, kappa unweighted. The statistics come from `mathlens.stats.agreement`.

`mathlens tutor agreement` writes the document `TUTOR_AGREEMENT`
(`RUN/analysis/tutor_agreement.jsonl`), schema version 2: everything is in its summary, an
`AgreementReport` (the graders compared, one `AgreementRow` per pair of graders x item or
dimension, and the judge's agreement with itself when it was asked more than once), the same shape
as the calculus `agreement` document; the bootstrap settings are the envelope's options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mathlens.analyze.judging import agreement as core
from mathlens.analyze.judging.agreement import AgreementOptions, AgreementReport, AgreementRow, Method
from mathlens.runs.documents import DocumentSpec
from mathlens.stats.bootstrap import CI

from .judge import ScoreSet
from .rubric import Rubric

__all__ = ["TUTOR_AGREEMENT", "AgreementOptions", "AgreementReport", "AgreementRow", "OrdinalStats",
           "agreement_report", "pair_agreement"]

TUTOR_AGREEMENT = DocumentSpec("tutor_agreement", 2, AgreementRow, AgreementReport,
                               rerun="mathlens tutor agreement RUN")


@dataclass(frozen=True)
class OrdinalStats:
    """Percent agreement, kappa and ordinal alpha over `n` paired ratings, with bootstrap CIs."""

    n: int
    percent: CI
    kappa: CI
    alpha: CI


def pair_agreement(pairs: Sequence[tuple[float, float]], scale: Sequence[int] | None = None, weighted: bool = False,
                   seed: int = 0, n_resamples: int = 1000) -> OrdinalStats:
    """Percent agreement, kappa (linear when `weighted`) and ordinal alpha of paired ratings on
    `scale`, with bootstrap CIs (for ratings from outside a run, such as MRBench's)."""
    method = Method("ordinal", "linear" if weighted else "none", tuple(scale) if scale is not None else None)
    stats = core.pair_stats(pairs, method, n_resamples, seed)
    assert stats.percent is not None  # an ordinal method always gives percent agreement
    return OrdinalStats(n=stats.n, percent=stats.percent, kappa=stats.kappa, alpha=stats.alpha)


def agreement_report(sources: Sequence[ScoreSet], rubric: Rubric, seed: int = 0,
                     n_resamples: int = 1000) -> AgreementReport:
    """Every pair of graders (in the order given: the judge first when present), per item and per
    dimension."""
    judgements = [j for s in sources for j in s.judgements]
    return core.agreement_report(judgements, rubric.units(), rubric.scopes(), rubric=rubric.name, noun="item",
                                 n_resamples=n_resamples, seed=seed)
