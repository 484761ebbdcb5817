"""Per question: the final-answer verdict of each response (the `ANSWERS` document)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class Verdict:
    label: str
    status: str
    predicted: str | None
    reference: str | None
    how: str | None
    #: where the answer was read: (text before, the span, text after), or None
    read_from: tuple[str, str, str] | None
    note: str
    #: the answer was read part by part (`parts`): no whole reading is shown beside them
    by_parts: bool
    #: LaTeX and markup marks in a response whose system role forbids them (None when it complies)
    violations: int | None
    parts: Table | None


def build(ctx: ReportContext, view: QuestionView) -> list[Verdict] | None:
    """One verdict per original response that the answers analysis checked."""
    out = []
    for resp in view.originals:
        e = resp.run.entry(ANSWERS, resp.record.key)
        if e is None:
            continue
        v = e.verdict
        rows: list[tuple[Cell, ...]] = [(f"({p.label})", p.status, p.predicted, p.reference,
                                         p.comparison.method if p.comparison else None, p.note or None)
                                        for p in (v.parts if v else [])]
        table = Table(ctx.uid("parts", view.anchor, resp.record.key), "Parts",
                      ("part", "verdict", "answer found", "reference", "compared by", "note"),
                      tuple(rows)) if rows else None
        out.append(Verdict(label=ctx.response_label(resp), status=e.status,
                           predicted=v.predicted if v else None, reference=v.reference if v else None,
                           how=v.how if v else None, note=v.note if v else "", by_parts=v is not None and v.by_parts,
                           read_from=v.span.excerpt(resp.record.response or "") if v and v.span else None,
                           violations=e.format.latex + e.format.markup if e.format and not e.format.compliant
                           else None, parts=table))
    return out or None


SECTION = QuestionSection(id="answers", title="Final answers", template="sections/answers.html.j2", build=build,
                          analyses=("answers",))
