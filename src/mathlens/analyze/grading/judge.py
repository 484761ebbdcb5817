"""Rubric grading by a judge model.

For each graded record the judge sees the rubric (with each criterion's maximum for the
question), the question, its reference answer and solution, the response, and, with
`with_evidence`, what mathlens found: the final-answer verdict and, if the flow analysis ran,
the first invalid step. It must reply with JSON shaped by a schema built for the question (one
`{points, rationale}` object per criterion), through the backend's JSON-schema constraint with
one repair retry (`generate_structured`).

The reply is then checked here as well: every criterion present, points finite and within
[0, max]. Anything unusable, and any model failure, is recorded as `ungraded` with the reason
and the raw replies; it is never scored as zero.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from mathlens.analyze.grading.equivalence import check_answer
from mathlens.analyze.grading.rubric import Rubric, rubric_text
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model
from mathlens.models.structured import generate_structured
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import RunRecord

GradeStatus = Literal["graded", "ungraded"]

JUDGE_ROLE = (
    "You are a mathematics instructor grading one exam answer against a rubric. Grade only what "
    "the response shows. For each criterion give the points earned (a number from 0 up to that "
    "criterion's maximum; halves are fine) and one or two sentences saying why. Reply with JSON only."
)


@dataclass(frozen=True)
class JudgeOptions:
    """How the judge is asked. `runs` > 1 repeats each request with seeds seed, seed+1, ...
    (for the judge's agreement with itself)."""

    with_evidence: bool = False
    max_tokens: int = 768
    temperature: float = 0.0
    seed: int = 1234
    runs: int = 1
    max_response_chars: int = 6000


@dataclass(frozen=True)
class FlowEvidence:
    """What the flow analysis found about one response (when it ran): its first invalid step."""

    first_invalid_step: int | None


class Evidence(BaseModel):
    """mathlens' own checks of a response, shown to the judge with `with_evidence`."""

    final_answer: str | None
    answer_check: str
    #: whether the flow analysis had checked the response's steps
    flow_checked: bool = False
    first_invalid_step: int | None = None

    def items(self) -> list[tuple[str, object]]:
        """(name, value) pairs as the judge reads them (the flow step only when the flow analysis ran)."""
        out: list[tuple[str, object]] = [("final_answer", self.final_answer), ("answer_check", self.answer_check)]
        if self.flow_checked:
            out.append(("first_invalid_step", self.first_invalid_step))
        return out


class CriterionGrade(BaseModel):
    """Points on one criterion, with the grader's reason."""

    criterion: str
    points: float
    max_points: float
    rationale: str = ""


class Grade(BaseModel):
    """One grade of one record by one grader (a judge run or a human): an entry of the `grades`
    and `human_grades` documents (`mathlens.analyze.grading.grades`)."""

    record: RecordRef
    grader: str
    judge_run: int = 0
    status: GradeStatus
    criteria: list[CriterionGrade] = Field(default_factory=list)
    total: float | None = None
    max_total: float
    evidence: Evidence | None = None
    error: str = ""
    raw: list[str] = Field(default_factory=list)


def verdict_schema(rubric: Rubric, question_points: float | None) -> type[BaseModel]:
    """A pydantic model with one `{points, rationale}` field per criterion, bounded by its maximum."""
    fields: dict[str, Any] = {}
    for c in rubric.criteria:
        top = round(rubric.max_points(c.id, question_points), 6)
        item = create_model(
            f"Score_{c.id}",
            points=(float, Field(ge=0, le=top, description=f"0 to {top:g}")),
            rationale=(str, Field(max_length=1000)),
        )
        fields[c.id] = (item, ...)
    return create_model("RubricVerdict", **fields)


def evidence_for(record: RunRecord, question: Question, flow: FlowEvidence | None) -> Evidence:
    """What mathlens found about a response, as shown to the judge (and recorded with the grade)."""
    verdict = check_answer(record.response or "", question)
    return Evidence(final_answer=verdict.predicted, answer_check=verdict.status, flow_checked=flow is not None,
                    first_invalid_step=flow.first_invalid_step if flow is not None else None)


def judge_messages(record: RunRecord, question: Question, rubric: Rubric, options: JudgeOptions,
                   evidence: Evidence | None = None) -> list[Message]:
    """The judge's conversation for one record."""
    parts = [rubric_text(rubric, question.total_points), "", "Question:", question.prompt_text()]
    refs = [a for a in question.answers] + [p.answer for p in question.parts if p.answer]
    if refs:
        parts += ["", "Reference answer: " + "; ".join(refs)]
    if question.solution:
        parts += ["", "Reference solution:", question.solution[:4000]]
    parts += ["", "Response to grade:", (record.response or "")[: options.max_response_chars]]
    if evidence:
        parts += ["", "Automatic checks (may be wrong): " + ", ".join(f"{k}: {v}" for k, v in evidence.items())]
    parts += ["", "Return the points and a rationale for each criterion: "
              + ", ".join(c.id for c in rubric.criteria) + "."]
    return [Message(role="system", content=JUDGE_ROLE), Message(role="user", content="\n".join(parts))]


def validate_points(value: BaseModel, rubric: Rubric, question_points: float | None
                    ) -> tuple[list[CriterionGrade], str]:
    """Check every criterion's points against its bounds; `(grades, "")` or `([], reason)`."""
    grades = []
    for c in rubric.criteria:
        item = getattr(value, c.id, None)
        top = rubric.max_points(c.id, question_points)
        if item is None:
            return [], f"criterion {c.id} missing"
        pts = float(item.points)
        if not math.isfinite(pts) or pts < 0 or pts > top + 1e-9:
            return [], f"criterion {c.id}: {pts:g} points is outside 0..{top:g}"
        grades.append(CriterionGrade(criterion=c.id, points=pts, max_points=top, rationale=item.rationale))
    return grades, ""


async def grade_record(model: Model, record: RunRecord, question: Question, rubric: Rubric,
                       options: JudgeOptions, judge_run: int = 0, flow: FlowEvidence | None = None) -> Grade:
    """Grade one record once. Never raises for a model or format failure: those are `ungraded`."""
    evidence = evidence_for(record, question, flow) if options.with_evidence else None
    max_total = rubric.question_points(question.total_points)
    base: dict[str, Any] = {"record": RecordRef.of(record), "grader": f"judge:{model.spec}",
                            "judge_run": judge_run, "max_total": max_total, "evidence": evidence}
    if record.status != "ok" or not record.response:
        return Grade(status="ungraded", error="the record has no response", **base)
    schema = verdict_schema(rubric, question.total_points)
    config = GenerateConfig(max_tokens=options.max_tokens, temperature=options.temperature,
                            seed=options.seed + judge_run, repeat_penalty=1.0)
    result = await generate_structured(model, judge_messages(record, question, rubric, options, evidence),
                                       schema, config)
    if result.status != "ok" or result.value is None:
        return Grade(status="ungraded", error=f"{result.status}: {result.error}", raw=list(result.raw), **base)
    grades, problem = validate_points(result.value, rubric, question.total_points)
    if problem:
        return Grade(status="ungraded", error=problem, raw=list(result.raw), **base)
    return Grade(status="graded", criteria=grades, total=sum(g.points for g in grades), raw=list(result.raw),
                 **base)


async def grade_records(model: Model, jobs: list[tuple[RunRecord, Question, FlowEvidence | None]],
                        rubric: Rubric, options: JudgeOptions,
                        on_done: Callable[[Grade], None] | None = None) -> list[Grade]:
    """Grade every `(record, question, flow)` job `options.runs` times, concurrently."""

    async def one(job: tuple[RunRecord, Question, FlowEvidence | None], run: int) -> Grade:
        grade = await grade_record(model, job[0], job[1], rubric, options, run, job[2])
        if on_done is not None:
            on_done(grade)
        return grade

    return list(await asyncio.gather(*(one(job, r) for job in jobs for r in range(options.runs))))
