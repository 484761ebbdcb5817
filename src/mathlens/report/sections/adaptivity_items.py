"""Per question: the 19-item tutoring rubric scores of each response with the judge's rationales
(`analysis/tutor_scores.jsonl`, read through `TUTOR_SCORES`)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.adaptivity.judge import TUTOR_SCORES, ItemScore
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class ItemCard:
    label: str
    table: Table


def _item_order(score: ItemScore) -> tuple[int, str]:
    s = score.item_id
    return (int(s[1:]) if s[1:].isdigit() else 999, s)


def build(ctx: ReportContext, view: QuestionView) -> list[ItemCard] | None:
    """One table of item scores per scored response (every learner profile of a tutoring run is a
    variant of the question, so variants are shown as well as originals)."""
    out = []
    for resp in [*view.originals, *view.variants]:
        scores = sorted(resp.run.entries(TUTOR_SCORES, resp.record.key), key=_item_order)
        if not scores:
            continue
        rows: list[tuple[Cell, ...]] = [(s.item_id, s.status, s.score, s.label, s.rationale or s.error)
                                        for s in scores]
        label = ctx.response_label(resp)
        if resp.record.variant.kind != "original":
            label = f"{label} · {resp.record.variant.name}"
        out.append(ItemCard(label, Table(ctx.uid("tutor-items", view.anchor, resp.record.key), "Rubric items",
                                         ("item", "status", "score", "label", "rationale"), tuple(rows))))
    return out or None


SECTION = QuestionSection(id="adaptivity_items", title="Tutoring rubric items",
                          template="sections/adaptivity_items.html.j2", build=build, analyses=(TUTOR_SCORES.name,))
