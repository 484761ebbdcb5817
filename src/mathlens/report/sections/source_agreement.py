"""Scorer audit: the imported source's own verdicts beside mathlens's answer check.

Reads the `SOURCE_AGREEMENT` document (written by the `source-agreement` analysis) and shows, per
run, one table of agreement per model, configuration and source scorer (percent agreement and
Cohen's kappa with their intervals, the 2x2 counts, the records left out) and one table of every
disagreement: the question (linked to its block), the repeat, both verdicts, both extracted
answers and the reference. Nothing is computed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT, ScorerAgreement
from mathlens.report.context import ReportContext
from mathlens.report.loader import RunData
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table
from mathlens.stats.bootstrap import CI


@dataclass(frozen=True)
class SourceAgreementView:
    tables: tuple[Table, ...]


def _ci(ci: CI) -> tuple[Cell, Cell, Cell]:
    return ci.estimate, ci.low if ci.status == "ok" else None, ci.high if ci.status == "ok" else None


def _shown(ci: CI) -> str:
    return ci.format(3) if ci.estimate is not None else ("undefined (one verdict throughout)"
                                                         if ci.status == "undefined" else ci.status)


def _left_out(row: ScorerAgreement) -> str:
    words = {"source_undecided": "source gave no verdict", "mathlens_undecided": "mathlens gave no verdict",
             "both_undecided": "neither gave one"}
    return ", ".join(f"{n} {words.get(k, k)}" for k, n in sorted(row.left_out.items())) or "none"


def _summary(ctx: ReportContext, run: RunData, suffix: str, rows: list[ScorerAgreement]) -> Table:
    counts = ("both correct", "source only", "mathlens only", "both incorrect", "left out")
    cols = ("model", "configuration", "scorer", "compared", "agreement [95% CI]", "Cohen's kappa [95% CI]", *counts)
    body = tuple((r.model, r.configuration, r.scorer, r.compared, _shown(r.agreement), _shown(r.kappa),
                  r.both_correct, r.source_only, r.mathlens_only, r.both_incorrect, _left_out(r)) for r in rows)
    export_cols = ("model", "configuration", "scorer", "compared", "agreement", "agreement low", "agreement high",
                   "kappa", "kappa low", "kappa high", *counts)
    export = tuple((r.model, r.configuration, r.scorer, r.compared, *_ci(r.agreement), *_ci(r.kappa),
                    r.both_correct, r.source_only, r.mathlens_only, r.both_incorrect, _left_out(r)) for r in rows)
    caption = ("“source only”: the source's scorer says correct and mathlens does not; “mathlens only”: the "
               "reverse. Intervals: 95% percentile bootstrap over records.")
    return Table(ctx.uid("source-agreement", run.label), "Scorer audit: the source's verdicts beside mathlens's"
                 + suffix, cols, body, caption=caption, export_columns=export_cols, export_rows=export)


def _disagreements(ctx: ReportContext, run: RunData, suffix: str, total: int) -> Table | None:
    anchors = {(v.exam_id, v.question_id): v.anchor for v in ctx.views}
    rows: list[tuple[Cell, ...]] = []
    links: list[str | None] = []
    for e in run.all_entries(SOURCE_AGREEMENT):
        if e.agree is not False:
            continue
        ref = e.record
        rows.append((ref.question_id, ref.repeat, ref.model, e.scorer, _word(e.source_correct, e.source_value),
                     e.source_answer, e.mathlens_status, e.mathlens_answer, e.reference))
        links.append(anchors.get((ref.exam_id, ref.question_id)))
    if not rows:
        return None
    return Table(ctx.uid("source-disagreements", run.label), f"Where they disagree: {total} verdict(s)" + suffix,
                 ("question", "repeat", "model", "scorer", "source verdict", "source answer", "mathlens verdict",
                  "mathlens answer", "reference"), tuple(rows), row_links=tuple(links))


def _word(correct: bool | None, value: str | float | bool | None) -> str:
    word = "correct" if correct else "incorrect" if correct is False else "no verdict"
    return f"{word} ({value})" if value is not None and not isinstance(value, bool) else word


def build(ctx: ReportContext) -> SourceAgreementView | None:
    """Per run with a source-agreement document: its agreement table and its disagreements."""
    tables: list[Table] = []
    for run in ctx.runs:
        doc = run.document(SOURCE_AGREEMENT)
        if doc is None or not doc.summary.rows:
            continue
        suffix = f" · {run.label}" if ctx.multi_run else ""
        tables.append(_summary(ctx, run, suffix, doc.summary.rows))
        listed = _disagreements(ctx, run, suffix, doc.summary.disagreements)
        if listed is not None:
            tables.append(listed)
    return SourceAgreementView(tuple(tables)) if tables else None


SECTION = ReportSection(id="source_agreement", title="Scorer audit", template="sections/source_agreement.html.j2",
                        build=build, analyses=("source-agreement",))
