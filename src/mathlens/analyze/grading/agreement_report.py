"""How far graders agree on the calculus rubric: judge vs humans, humans among themselves, and the
judge with itself, computed by the judging core (`mathlens.analyze.judging.agreement`).

For every pair of graders and every scope (each rubric criterion, and `overall`, the question
total) the report gives the number of shared records, quadratic-weighted Cohen's kappa on points,
Krippendorff's alpha (interval) and the mean absolute error in points, each with a bootstrap
interval over records. Only records both graders scored count. Repeated judge runs
(`--judge-runs N`) appear as graders `judge:...#run<k>`; the judge's self-agreement is alpha
across all its runs.

Agreement describes the graders, not the graded: every record both graders scored is one unit,
whatever its configuration or variant, and no score of a configuration is computed here (the
scores per configuration and variant are in `tables.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from mathlens.analyze.grading.judge import Grade
from mathlens.analyze.grading.rubric import Rubric
from mathlens.analyze.judging import agreement as core
from mathlens.analyze.judging.agreement import AgreementOptions, AgreementReport, AgreementRow, SelfAgreement
from mathlens.runs.documents import DocumentSpec

__all__ = ["AGREEMENT", "AgreementOptions", "AgreementReport", "AgreementRow", "SelfAgreement", "agreement_report"]

#: `analysis/agreement.jsonl`: written by `mathlens agreement`; everything is in the summary (no
#: entries). Version 2: one row shape for every rubric (`kappa`, `alpha` with the weights and
#: level used, `mae`), shared with `tutor_agreement`.
AGREEMENT = DocumentSpec("agreement", 2, AgreementRow, AgreementReport, rerun="mathlens agreement RUN")


def agreement_report(grades: Sequence[Grade], rubric: Rubric, n_resamples: int = 2000,
                     seed: int = 0) -> AgreementReport:
    """Every pair of graders (judge run 0 and humans), and judge self-agreement, on each criterion
    and on the question total."""
    return core.agreement_report(grades, rubric.units(None), rubric.scopes(), rubric=rubric.label,
                                 noun="criterion", n_resamples=n_resamples, seed=seed)
