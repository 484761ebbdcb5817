"""Agreement tables: rubric grading (`agreement`: grader pairs and the judge against itself) and
the tutoring rubric (`tutor_agreement`: graders per item and dimension). Both documents hold the
judging core's `AgreementReport`, so one table layout (`pairs_table`) serves both.

Each statistic is shown as its estimate with the 95% bootstrap interval over the units both
graders scored; the CSV gives estimate, bounds and n in separate columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mathlens.analyze.adaptivity.agreement import TUTOR_AGREEMENT
from mathlens.analyze.grading.agreement_report import AGREEMENT
from mathlens.analyze.judging.agreement import AgreementReport, AgreementRow, SelfAgreement
from mathlens.report.export.builder import Col, Layout, TableBuilder, constant, empty
from mathlens.report.export.table import Column, Estimate
from mathlens.report.loader import RunData
from mathlens.runs.documents import Document
from mathlens.stats.bootstrap import CI

WEIGHTS = {"none": "unweighted", "linear": "linear", "quadratic": "quadratic"}


def _ci(ci: CI | None) -> Estimate | None:
    return None if ci is None else Estimate.interval(ci.estimate, ci.low, ci.high, ci.n)


def _named(header: str, values: set[str]) -> tuple[str, bool]:
    """A statistic's header with its variant when every row used the same one (``Cohen's κ
    (quadratic)``); otherwise the plain header and True: the variant gets a column of its own."""
    return (f"{header} ({values.pop()})", False) if len(values) == 1 else (header, True)


def pairs_table(title: str, rows: Sequence[AgreementRow], caption: str) -> Layout[AgreementRow]:
    """Agreement rows in the judging core's shape: percent agreement (ordinal scales), kappa, alpha
    and the mean absolute error (points), each with its interval; which kappa and alpha were
    computed is named in the header, or in a column when the rows differ."""
    kappa, kappa_col = _named("Cohen's κ", {WEIGHTS[r.kappa_weights] for r in rows})
    alpha, alpha_col = _named("Krippendorff's α", {r.alpha_level for r in rows})
    cols: list[Col[AgreementRow]] = [
        Col(Column("Grader A"), lambda r: r.a),
        Col(Column("Grader B"), lambda r: r.b),
        Col(Column("Scope"), lambda r: r.scope),
        Col(Column("Unit"), lambda r: r.unit, constant),
        Col(Column("n", 0), lambda r: r.n),
        Col(Column("Agreement (share)", 2), lambda r: _ci(r.percent), empty),
        Col(Column(kappa, 2), lambda r: _ci(r.kappa)),
        *([Col[AgreementRow](Column("κ weights"), lambda r: WEIGHTS[r.kappa_weights])] if kappa_col else []),
        Col(Column(alpha, 2), lambda r: _ci(r.alpha)),
        *([Col[AgreementRow](Column("α level"), lambda r: r.alpha_level)] if alpha_col else []),
        Col(Column("Mean absolute error (points)", 2), lambda r: _ci(r.mae), empty),
    ]
    return Layout(title, cols, rows, caption, groups=2)


def grading_pairs(run: RunData, doc: Document[AgreementReport]) -> list[Layout[Any]]:
    caption = ("Agreement between graders on each rubric criterion and on the question total, over the records "
               "both scored, with 95% bootstrap intervals.")
    return [pairs_table("Grading agreement between graders", doc.summary.pairs, caption)]


def self_table(title: str, rows: Sequence[SelfAgreement]) -> Layout[SelfAgreement]:
    """A judge against itself across its repeated runs, per unit or scope."""
    alpha, alpha_col = _named("Krippendorff's α", {s.alpha_level for s in rows})
    cols: list[Col[SelfAgreement]] = [
        Col(Column("Grader"), lambda s: s.grader),
        Col(Column("Runs", 0), lambda s: s.runs),
        Col(Column("Scope"), lambda s: s.scope),
        Col(Column("Units", 0), lambda s: s.units),
        Col(Column(alpha, 2), lambda s: _ci(s.alpha)),
        *([Col[SelfAgreement](Column("α level"), lambda s: s.alpha_level)] if alpha_col else []),
        Col(Column("Identical scores (share)", 2), lambda s: s.identical_share),
    ]
    caption = "The judge against itself across repeated runs, with 95% bootstrap intervals."
    return Layout(title, cols, rows, caption, groups=1)


def grading_self(run: RunData, doc: Document[AgreementReport]) -> list[Layout[Any]]:
    return [self_table("Judge self-agreement across grading runs", doc.summary.self_agreement)]


def tutoring(run: RunData, doc: Document[AgreementReport]) -> list[Layout[Any]]:
    caption = ("Agreement between tutoring graders per rubric item (kappa linearly weighted on three-point items) "
               "and per dimension (items pooled, one observation per response x item), with 95% bootstrap "
               "intervals.")
    return [pairs_table("Tutoring rubric agreement between graders", doc.summary.pairs, caption)]


def tutoring_self(run: RunData, doc: Document[AgreementReport]) -> list[Layout[Any]]:
    return [self_table("Judge self-agreement across tutoring scoring runs", doc.summary.self_agreement)]


GRADING_PAIRS = TableBuilder("grading-agreement", "Grading agreement between graders", AGREEMENT, grading_pairs)
GRADING_SELF = TableBuilder("grading-self-agreement", "Judge self-agreement", AGREEMENT, grading_self)
TUTORING = TableBuilder("tutoring-agreement", "Tutoring rubric agreement", TUTOR_AGREEMENT, tutoring)
TUTORING_SELF = TableBuilder("tutoring-self-agreement", "Tutoring judge self-agreement", TUTOR_AGREEMENT,
                             tutoring_self)
