"""Per question: MAPLE's verdict on each solution — step labels with reasons, reflection, score parts
(entries of the `MAPLE` document, fetched by record key)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.maple.results import MAPLE, SolutionMaple
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table, display_cell


@dataclass(frozen=True)
class MapleCard:
    label: str
    status: str
    answer_status: str
    parts: tuple[tuple[str, str], ...]
    steps: Table | None
    reflection: str | None
    error: str


def _parts(e: SolutionMaple) -> tuple[tuple[str, str], ...]:
    return (("MAPLE", display_cell(e.maple)), ("e (error rate)", display_cell(e.e)),
            ("v (validity)", f"{display_cell(e.v)} ({e.v_basis or e.vr_source})"),
            ("r (redundancy)", f"{display_cell(e.r)} ({e.r_basis or e.vr_source})"),
            ("label counts", ", ".join(f"{k}: {v}" for k, v in e.counts.items()) or "none"),
            ("answer", f"{e.predicted} (reference {e.reference})"))


def build(ctx: ReportContext, view: QuestionView) -> list[MapleCard] | None:
    """One card per original response with a MAPLE entry."""
    out = []
    for resp in view.originals:
        e = resp.run.entry(MAPLE, resp.record.key)
        if e is None:
            continue
        rows: list[tuple[Cell, ...]] = []
        for s in e.step_labels:
            text = e.steps[s.step - 1] if s.step <= len(e.steps) else None
            rows.append((s.step, text, ", ".join(s.labels), s.reason, s.source))
        steps = Table(ctx.uid("maple-steps", view.anchor, resp.record.key), "Labelled steps",
                      ("step", "text", "labels", "reason", "source"), tuple(rows)) if rows else None
        reflection = e.reflection.text if e.reflection is not None and e.reflection.text else None
        out.append(MapleCard(label=ctx.response_label(resp), status=e.status, answer_status=e.answer_status,
                             parts=_parts(e), steps=steps, reflection=reflection, error=e.error))
    return out or None


SECTION = QuestionSection(id="maple_steps", title="MAPLE step labels", template="sections/maple_steps.html.j2",
                          build=build, analyses=("maple",))
