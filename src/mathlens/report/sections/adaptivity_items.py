"""Per question: the 19-item tutoring rubric scores of each response with the judge's rationales
(`analysis/tutor_scores.jsonl`, read through `TUTOR_SCORES`: one judgement per response, one
score per item)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.adaptivity.judge import TUTOR_SCORES, item_order
from mathlens.analyze.judging.entries import Judgement
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class ItemCard:
    label: str
    table: Table


def _rows(judgement: Judgement) -> list[tuple[Cell, ...]]:
    """One row per item, in rubric order; a response the judge could not score at all is one row
    saying why."""
    scores = sorted(judgement.scores, key=lambda s: item_order(s.unit))
    if not scores:
        return [("-", "unscored", None, None, judgement.error)]
    return [(s.unit, s.status, s.shown, s.label, s.rationale or s.error) for s in scores]


def build(ctx: ReportContext, view: QuestionView) -> list[ItemCard] | None:
    """One table of item scores per scored response (every learner profile of a tutoring run is a
    variant of the question, so variants are shown as well as originals)."""
    out = []
    for resp in [*view.originals, *view.variants]:
        for judgement in resp.run.entries(TUTOR_SCORES, resp.record.key):
            label = ctx.response_label(resp)
            if resp.record.variant.kind != "original":
                label = f"{label} · {resp.record.variant.name}"
            if judgement.judge_run:
                label = f"{label} · judge run {judgement.judge_run + 1}"
            out.append(ItemCard(label, Table(ctx.uid("tutor-items", view.anchor, resp.record.key), "Rubric items",
                                             ("item", "status", "score", "label", "rationale"),
                                             tuple(_rows(judgement)))))
    return out or None


SECTION = QuestionSection(id="adaptivity_items", title="Tutoring rubric items",
                          template="sections/adaptivity_items.html.j2", build=build, analyses=(TUTOR_SCORES.name,))
