"""Per question: rubric points per criterion with the grader's rationale, from the judge's grades
(`GRADES`) and imported human grades (`HUMAN_GRADES`)."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.grading.grades import GRADES, HUMAN_GRADES
from mathlens.analyze.grading.judge import Grade
from mathlens.analyze.grading.rubric import Rubric
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView, Response
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table

SOURCES = (GRADES, HUMAN_GRADES)


@dataclass(frozen=True)
class GradeCard:
    label: str
    grader: str
    status: str
    total: float | None
    max_total: float | None
    table: Table | None
    error: str


def _criterion_name(rubric: Rubric, cid: str) -> str:
    found = next((c for c in rubric.criteria if c.id == cid), None)
    return found.name if found is not None else cid


def _card(ctx: ReportContext, view: QuestionView, resp: Response, grade: Grade, rubric: Rubric) -> GradeCard:
    """One grade: the points of every criterion scored (a blank criterion of a human grade is left
    out; the grade's status and error say it is incomplete)."""
    rows: list[tuple[Cell, ...]] = [(_criterion_name(rubric, s.unit), s.value, s.max, s.rationale)
                                    for s in grade.scores if s.value is not None]
    grader = grade.grader if grade.judge_run == 0 else f"{grade.grader} (judge run {grade.judge_run + 1})"
    table = Table(ctx.uid("rubric", view.anchor, resp.record.key, grader), f"Rubric points · {grader}",
                  ("criterion", "points", "of", "rationale"), tuple(rows), decimals={1: 1, 2: 1}) if rows else None
    label = ctx.response_label(resp)
    if not grade.record.original:
        label += f" · prompt variant {grade.record.variant}"
    return GradeCard(label=label, grader=grader, status=grade.status, total=grade.total,
                     max_total=grade.max_total, table=table, error=grade.error)


def build(ctx: ReportContext, view: QuestionView) -> list[GradeCard] | None:
    """Every grade (judge runs and human graders) of each response to the question: the original
    prompts, then any prompt variant that was graded."""
    out = []
    for resp in [*view.originals, *view.variants]:
        for spec in SOURCES:
            doc = resp.run.document(spec)
            if doc is None:
                continue
            for grade in resp.run.entries(spec, resp.record.key):
                out.append(_card(ctx, view, resp, grade, doc.summary.rubric))
    return out or None


SECTION = QuestionSection(id="rubric", title="Rubric grades", template="sections/rubric.html.j2", build=build,
                          analyses=("grades", "human_grades"))
