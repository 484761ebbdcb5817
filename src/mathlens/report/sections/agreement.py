"""Agreement between graders: judge vs humans and humans vs each other (kappa, alpha, MAE with CIs).

Reads the grading agreement (`AGREEMENT`, written by `mathlens agreement`), the tutoring rubric
agreement (`TUTOR_AGREEMENT`, `mathlens tutor agreement`), both in the judging core's row shape,
and the imported human grades (`HUMAN_GRADES`, counted per grader). Each interval is shown as
estimate, low and high; a judge asked more than once also gets its agreement with itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mathlens.analyze.adaptivity.agreement import TUTOR_AGREEMENT
from mathlens.analyze.grading.agreement_report import AGREEMENT
from mathlens.analyze.grading.grades import HUMAN_GRADES
from mathlens.analyze.judging.agreement import AgreementReport, AgreementRow
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.runs.documents import DocumentSpec
from mathlens.stats.bootstrap import CI


@dataclass(frozen=True)
class Agreement:
    tables: tuple[Table, ...]


def _ci(ci: CI | None) -> tuple[Cell, Cell, Cell]:
    return (None, None, None) if ci is None else (ci.estimate, ci.low, ci.high)


def _ci_columns(name: str) -> tuple[str, str, str]:
    return name, f"{name} low", f"{name} high"


def _pair_table(ctx: ReportContext, uid: tuple[str, ...], title: str, rows: Sequence[AgreementRow],
                ordinal: bool) -> Table:
    """Agreement rows of one rubric: percent agreement, kappa and ordinal alpha on an ordinal
    rubric; quadratic kappa, interval alpha and the mean absolute error on a points rubric."""
    cols: tuple[str, ...]
    body: tuple[tuple[Cell, ...], ...]
    if ordinal:
        cols = ("a", "b", "scope", "unit", "n", *_ci_columns("percent agreement"), *_ci_columns("kappa"),
                *_ci_columns("alpha (ordinal)"))
        body = tuple((r.a, r.b, r.scope, r.unit, r.n, *_ci(r.percent), *_ci(r.kappa), *_ci(r.alpha)) for r in rows)
        first = 5
    else:
        cols = ("a", "b", "scope", "n", *_ci_columns("kappa (quadratic)"), *_ci_columns("alpha (interval)"),
                *_ci_columns("MAE (points)"))
        body = tuple((r.a, r.b, r.scope, r.n, *_ci(r.kappa), *_ci(r.alpha), *_ci(r.mae)) for r in rows)
        first = 4
    return Table(ctx.uid(*uid), title, cols, body, decimals={i: 3 for i in range(first, len(cols))})


def _self_table(ctx: ReportContext, uid: tuple[str, ...], title: str, report: AgreementReport) -> Table:
    level = report.self_agreement[0].alpha_level
    cols = ("judge", "runs", "scope", "units", *_ci_columns(f"alpha ({level})"), "identical share")
    rows = tuple((s.grader, s.runs, s.scope, s.units, *_ci(s.alpha), s.identical_share) for s in report.self_agreement)
    return Table(ctx.uid(*uid), title, cols, rows, decimals={i: 3 for i in range(4, len(cols))})


@dataclass(frozen=True)
class _Source:
    """One agreement document and how its tables are named."""

    spec: DocumentSpec[AgreementRow, AgreementReport]
    pairs_uid: tuple[str, str]
    pairs_title: str
    self_title: str
    #: an ordinal rubric (percent agreement, ordinal alpha), else points (quadratic kappa, MAE)
    ordinal: bool


SOURCES = (
    _Source(AGREEMENT, ("agreement", "pairs"), "Grading agreement between graders",
            "Grading agreement of the judge with itself across runs", ordinal=False),
    _Source(TUTOR_AGREEMENT, ("tutor_agreement", "rows"), "Tutoring rubric agreement",
            "Tutoring rubric agreement of the judge with itself across runs", ordinal=True),
)


def _agreement(ctx: ReportContext, run: RunData, suffix: str, source: _Source) -> list[Table]:
    doc = run.document(source.spec)
    if doc is None:
        return []
    report = doc.summary
    out = []
    if report.pairs:
        out.append(_pair_table(ctx, (*source.pairs_uid, run.label), source.pairs_title + suffix, report.pairs,
                               ordinal=source.ordinal))
    if report.self_agreement:
        out.append(_self_table(ctx, (source.pairs_uid[0], "self", run.label), source.self_title + suffix, report))
    return out


def _human(ctx: ReportContext, run: RunData, suffix: str) -> list[Table]:
    doc = run.document(HUMAN_GRADES)
    if doc is None or not doc.summary.by_grader:
        return []
    return [Table(ctx.uid("human-grades", run.label), "Imported human grades" + suffix, ("grader", "grades"),
                  tuple(doc.summary.by_grader.items()))]


def build(ctx: ReportContext) -> Agreement | None:
    """The grading and tutoring agreement tables, plus a count of imported human grades per grader."""
    tables: list[Table] = []
    for run in ctx.runs:
        suffix = f" · {run.label}" if ctx.multi_run else ""
        for source in SOURCES:
            tables.extend(_agreement(ctx, run, suffix, source))
        tables.extend(_human(ctx, run, suffix))
    return Agreement(tuple(tables)) if tables else None


SECTION = ReportSection(id="agreement", title="Grader agreement", template="sections/agreement.html.j2",
                        build=build, analyses=("agreement", "tutor_agreement", "human_grades"))
