"""Per question: the 19-item tutoring rubric scores of each response with the judge's rationales
(`analysis/tutor_scores.json`)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table

ANALYSIS = "tutor_scores"


@dataclass(frozen=True)
class ItemCard:
    label: str
    table: Table


def _item_order(item_id: object) -> tuple[int, str]:
    s = str(item_id)
    return (int(s[1:]) if s[1:].isdigit() else 999, s)


def build(ctx: ReportContext, view: QuestionView) -> list[ItemCard] | None:
    """One table of item scores per original response that was scored."""
    out = []
    for resp in view.originals:
        scores = sorted(resp.run.entries(ANALYSIS, resp.record.key), key=lambda s: _item_order(s.get("item_id")))
        if not scores:
            continue
        rows: list[tuple[Cell, ...]] = [(s.get("item_id"), s.get("status"), s.get("score"), s.get("label"),
                                         s.get("rationale") or s.get("error")) for s in scores]
        out.append(ItemCard(ctx.response_label(resp),
                            Table(ctx.uid("tutor-items", view.anchor, resp.record.key), "Rubric items",
                                  ("item", "status", "score", "label", "rationale"), tuple(rows))))
    return out or None


SECTION = QuestionSection(id="adaptivity_items", title="Tutoring rubric items",
                          template="sections/adaptivity_items.html.j2", build=build, analyses=(ANALYSIS,))
