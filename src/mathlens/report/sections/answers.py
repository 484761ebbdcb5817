"""Per question: the final-answer verdict of each response (`analysis/answers.json`)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.lookup import first
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table


@dataclass(frozen=True)
class Verdict:
    label: str
    status: str
    predicted: str | None
    reference: str | None
    how: str | None
    note: str
    violations: int | None
    parts: Table | None


def build(ctx: ReportContext, view: QuestionView) -> list[Verdict] | None:
    """One verdict per original response that the answers analysis checked."""
    out = []
    for resp in view.originals:
        e = resp.run.entry("answers", resp.record.key)
        if e is None:
            continue
        verdict = first(e, "verdict") or {}
        parts = [p for p in (first(verdict, "parts") or []) if isinstance(p, dict)]
        rows: list[tuple[Cell, ...]] = [(f"({p.get('label')})", first(p, "status"), first(p, "predicted"),
                                         first(p, "reference"), first(p, "comparison.method", "comparison.how"))
                                        for p in parts]
        table = Table(ctx.uid("parts", view.anchor, resp.record.key), "Parts",
                      ("part", "verdict", "answer found", "reference", "compared by"), tuple(rows)) if rows else None
        fmt = first(e, "format") or {}
        count = first(fmt, "count", "total", "n_violations")
        if count is None and isinstance(fmt.get("violations"), list):
            count = len(fmt["violations"])
        out.append(Verdict(label=ctx.response_label(resp), status=str(first(e, "status", default="unknown")),
                           predicted=first(verdict, "predicted"), reference=first(verdict, "reference"),
                           how=first(verdict, "how"), note=str(first(verdict, "note", default="")),
                           violations=count if isinstance(count, int) else None, parts=table))
    return out or None


SECTION = QuestionSection(id="answers", title="Final answers", template="sections/answers.html.j2", build=build,
                          analyses=("answers",))
