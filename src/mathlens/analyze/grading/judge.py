"""Rubric grading by a judge model, through the judging core (`mathlens.analyze.judging`).

For each graded record the judge sees the rubric (with each criterion's maximum for the
question), the question, its reference answer and solution, the response, and, with
`with_evidence` (the default), what mathlens found: the final answer it read with the checker's
verdict, and, if the flow analysis ran, the invalid steps with the values expected. The same
checks are recorded with every grade; `reconcile.py` compares the judge's points with them.
That conversation is this rubric's prompt hook (`judge_messages`); the core asks for all
criteria of a response in one request, with a reply schema built for the question (one
`{points, rationale}` object per criterion), through the backend's JSON-schema constraint with
one repair retry.

The reply is then checked by the core as well: every criterion present, points finite and within
[0, max]. Anything unusable, and any model failure, is recorded as `ungraded` with the reason
and the raw replies; it is never scored as zero. A grade is a `Judgement` (`Grade` here) with
one `UnitScore` per criterion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from mathlens.analyze.grading.equivalence import check_answer
from mathlens.analyze.grading.rubric import Rubric, rubric_text
from mathlens.analyze.judging.entries import (
    Evidence,
    Judgement,
    JudgementStatus,
    PartEvidence,
    StepEvidence,
    UnitScore,
)
from mathlens.analyze.judging.request import (
    JudgeJob,
    RequestOptions,
    Sampling,
    judge,
    judge_jobs,
    read_reply,
    reply_model,
)
from mathlens.analyze.judging.units import Target, Unit
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.models.model import Model
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import RunRecord

#: a rubric grade: one record judged once by one grader (the core's `Judgement`)
Grade = Judgement
GradeStatus = JudgementStatus

__all__ = ["Evidence", "FlowEvidence", "Grade", "GradeStatus", "JudgeOptions", "evidence_for", "grade_record",
           "grade_records", "judge_messages", "target_of", "validate_points", "verdict_schema"]

JUDGE_ROLE = (
    "You are a mathematics instructor grading one exam answer against a rubric. Grade only what "
    "the response shows. For each criterion give the points earned (a number from 0 up to that "
    "criterion's maximum; halves are fine) and one or two sentences saying why. Reply with JSON only."
)


@dataclass(frozen=True)
class JudgeOptions(Sampling):
    """How the judge is asked: the core's `Sampling` (`runs` > 1 measures the judge's agreement
    with itself), whether it sees mathlens' evidence, and how much of the response it reads."""

    with_evidence: bool = True
    max_response_chars: int = 6000

    def request(self) -> RequestOptions:
        """The core's request options: all criteria in one request, no repeat penalty."""
        return RequestOptions(**self.sampling(), repeat_penalty=1.0, per_unit=False, max_rationale_chars=1000,
                              missing="criteria unscored")


@dataclass(frozen=True)
class FlowEvidence:
    """What the flow analysis found about one response (when it ran): its first invalid step and
    the invalid steps with the values expected (the first few)."""

    first_invalid_step: int | None
    invalid_steps: tuple[StepEvidence, ...] = ()


def verdict_schema(rubric: Rubric, question_points: float | None) -> type[BaseModel]:
    """A pydantic model with one `{points, rationale}` field per criterion, bounded by its maximum."""
    return reply_model(rubric.units(question_points))


def evidence_for(record: RunRecord, question: Question, flow: FlowEvidence | None) -> Evidence:
    """What mathlens found about a response, as shown to the judge (and recorded with the grade).

    A response the token cap cut states no final answer (`no_answer`) unless it marks one the cut did
    not reach (`check_answer(..., cut=True)`), as the answers analysis and the quality flags say. A
    question with lettered parts keeps the part-by-part verdict: parts answered before the cut are
    shown with theirs."""
    verdict = check_answer(record.response or "", question, cut=record.truncated)
    status: str = verdict.status
    if not verdict.predicted and not verdict.by_parts:
        status = "no_answer"
    parts = [PartEvidence(label=p.label, final_answer=p.predicted, answer_check=p.status, reference=p.reference,
                          note=p.note) for p in verdict.parts] if verdict.by_parts else []
    return Evidence(final_answer=verdict.predicted if status != "no_answer" else None, answer_check=status,
                    reference=verdict.reference, parts=parts, flow_checked=flow is not None,
                    first_invalid_step=flow.first_invalid_step if flow is not None else None,
                    invalid_steps=list(flow.invalid_steps) if flow is not None else [])


def judge_messages(record: RunRecord, question: Question, rubric: Rubric, options: JudgeOptions,
                   evidence: Evidence | None = None) -> list[Message]:
    """The judge's conversation for one record (every criterion of the rubric)."""
    parts = [rubric_text(rubric, question.total_points), "", "Question:", question.prompt_text()]
    refs = [a for a in question.answers] + [p.answer for p in question.parts if p.answer]
    if refs:
        parts += ["", "Reference answer: " + "; ".join(refs)]
    if question.solution:
        parts += ["", "Reference solution:", question.solution[:4000]]
    parts += ["", "Response to grade:", (record.response or "")[: options.max_response_chars]]
    if evidence:
        parts += ["", "Automatic checks by a symbolic checker (reliable where they are decisive; weigh them "
                      "against the response):", *evidence.describe()]
    parts += ["", "Return the points and a rationale for each criterion: "
              + ", ".join(c.id for c in rubric.criteria) + "."]
    return [Message(role="system", content=JUDGE_ROLE), Message(role="user", content="\n".join(parts))]


def target_of(record: RunRecord | RecordRef, question: Question, rubric: Rubric) -> Target:
    """A record with the rubric's criteria for its question (out of the question's points)."""
    ref = record if isinstance(record, RecordRef) else RecordRef.of(record)
    return Target(record=ref, units=rubric.units(question.total_points),
                  points=rubric.question_points(question.total_points))


def validate_points(value: BaseModel, rubric: Rubric, question_points: float | None
                    ) -> tuple[list[UnitScore], str]:
    """Check every criterion's points against its bounds; `(scores, "")` or `([], reason)`."""
    return read_reply(value, rubric.units(question_points))


def _job(record: RunRecord, question: Question, rubric: Rubric, options: JudgeOptions,
         flow: FlowEvidence | None) -> JudgeJob:
    # The checks are always recorded with the grade (reconciliation reads them); the judge is shown
    # them only `with_evidence`.
    evidence = evidence_for(record, question, flow)
    target = target_of(record, question, rubric)
    if record.status != "ok" or not record.response:
        return JudgeJob(target, None, "the record has no response", evidence)

    def prompt(_units: Sequence[Unit]) -> list[Message]:
        return judge_messages(record, question, rubric, options, evidence if options.with_evidence else None)

    return JudgeJob(target, prompt, evidence=evidence)


async def grade_record(model: Model, record: RunRecord, question: Question, rubric: Rubric,
                       options: JudgeOptions, judge_run: int = 0, flow: FlowEvidence | None = None) -> Grade:
    """Grade one record once. Never raises for a model or format failure: those are `ungraded`."""
    return await judge(model, _job(record, question, rubric, options, flow), options.request(), judge_run)


async def grade_records(model: Model, jobs: list[tuple[RunRecord, Question, FlowEvidence | None]],
                        rubric: Rubric, options: JudgeOptions,
                        on_done: Callable[[Grade], None] | None = None) -> list[Grade]:
    """Grade every `(record, question, flow)` job `options.runs` times, concurrently."""
    return await judge_jobs(model, [_job(rec, q, rubric, options, flow) for rec, q, flow in jobs],
                            options.request(), on_done)
