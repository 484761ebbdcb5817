"""Per question: rubric points per criterion with the grader's rationale (`analysis/grades.json`,
and imported human grades in `analysis/human_grades.json`)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.lookup import first, num
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table

SOURCES = ("grades", "human_grades")


@dataclass(frozen=True)
class GradeCard:
    label: str
    grader: str
    status: str
    total: float | None
    max_total: float | None
    table: Table | None
    error: str


def build(ctx: ReportContext, view: QuestionView) -> list[GradeCard] | None:
    """Every grade (judge runs and human graders) of each original response."""
    out = []
    for resp in view.originals:
        for source in SOURCES:
            for e in resp.run.entries(source, resp.record.key):
                crit = [c for c in (first(e, "criteria") or []) if isinstance(c, dict)]
                rows: list[tuple[Cell, ...]] = [
                    (str(first(c, "name", "criterion", "id", default="")), num(first(c, "points", "score")),
                     num(first(c, "max_points", "max", "possible")), str(first(c, "rationale", "reason", default="")))
                    for c in crit]
                grader = str(first(e, "grader", "judge", "annotator", default=source))
                if isinstance(e.get("judge_run"), int) and e["judge_run"] > 0:
                    grader += f" (judge run {e['judge_run'] + 1})"
                table = Table(ctx.uid("rubric", view.anchor, resp.record.key, grader), f"Rubric points · {grader}",
                              ("criterion", "points", "of", "rationale"), tuple(rows),
                              decimals={1: 1, 2: 1}) if rows else None
                out.append(GradeCard(label=ctx.response_label(resp), grader=grader,
                                     status=str(first(e, "status", default="graded")),
                                     total=num(first(e, "total", "points")), max_total=num(first(e, "max_total")),
                                     table=table, error=str(first(e, "error", default=""))))
    return out or None


SECTION = QuestionSection(id="rubric", title="Rubric grades", template="sections/rubric.html.j2", build=build,
                          analyses=("grades",))
