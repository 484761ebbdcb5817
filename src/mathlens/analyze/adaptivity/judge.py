"""A judge model scores each rubric item of each response separately, with a rationale.

Every item is its own request, constrained to a small JSON Schema: `{"rationale": str, "rating":
one of the item's labels}`. A reply that still fails validation after the repair retry, or a
failed model call, gives an `unscored` item with the reason; it never becomes a zero.

The judge's scores are the document `TUTOR_SCORES` (`RUN/analysis/tutor_scores.jsonl`): one
`ItemScore` entry per response x rubric item, each naming its run record (`record`), and a
`ScoresSummary` with the judge, the items scored and the status counts per (model, context
condition, learner profile).
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model
from mathlens.models.structured import generate_structured
from mathlens.runs.documents import DocumentSpec, RecordRef

from .design import Cell
from .rubric import RubricItem

#: Characters of a tutor reply shown to the judge; longer replies are cut (and the judge is told).
MAX_RESPONSE_CHARS = 4000
MAX_RATIONALE_CHARS = 300

JUDGE_SYSTEM = (
    "You grade one reply of a math tutor against one rubric question. Read who the learner is, what "
    "the tutor was asked, the reference solution and the tutor's reply. Then answer the rubric question "
    "with exactly one of the allowed labels, after a short rationale. Judge only what the reply says."
)

ScoreStatus = Literal["ok", "unscored"]


class ItemVerdict(BaseModel):
    """One rubric item scored by a judge or a person, before it is tied to a run record."""

    item_id: str
    #: `judge:<model spec>` or `human:<annotator>`
    source: str
    status: ScoreStatus
    score: int | None = None
    label: str | None = None
    rationale: str = ""
    error: str | None = None
    raw: list[str] = Field(default_factory=list)


class ItemScore(ItemVerdict):
    """One rubric item of one response of the run (an entry of `TUTOR_SCORES` and `TUTOR_HUMAN`)."""

    record: RecordRef

    @property
    def key(self) -> str:
        """The record key of the response."""
        return self.record.key


class ScoreGroup(BaseModel):
    """Status counts of one (model, context condition, learner profile) cell of the design."""

    model: str
    configuration: str
    variant: str
    responses: int
    ok: int
    unscored: int


class ScoresSummary(BaseModel):
    """The summary line of a scores document (judge or human)."""

    source: str
    rubric: str
    judge: dict[str, Any] | None = Field(default=None, description="spec and identity of the judge model")
    items: list[str] = Field(default_factory=list)
    responses: int = 0
    counts: dict[str, int] = Field(default_factory=dict)
    groups: list[ScoreGroup] = Field(default_factory=list)


TUTOR_SCORES = DocumentSpec("tutor_scores", 1, ItemScore, ScoresSummary,
                            rerun="mathlens tutor score RUN --judge MODEL")


@dataclass(frozen=True)
class ScoreSet:
    """All item scores from one source (`judge:<spec>` or `human:<name>`), in memory."""

    source: str
    rubric: str
    scores: tuple[ItemScore, ...]
    judge: dict[str, Any] | None = None

    def counts(self) -> dict[str, int]:
        """How many item scores have each status."""
        out: dict[str, int] = {}
        for s in self.scores:
            out[s.status] = out.get(s.status, 0) + 1
        return out

    def items(self) -> list[str]:
        """The rubric items scored, in rubric order (Q1, Q2, ..., Q19)."""
        return sorted({s.item_id for s in self.scores}, key=lambda i: (len(i), i))

    def summary(self) -> ScoresSummary:
        """The typed summary of these scores, with counts per design cell."""
        keys: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        status: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
        for s in self.scores:
            keys[s.record.group].add(s.record.key)
            status[s.record.group][s.status] += 1
        rows = [ScoreGroup(model=m, configuration=c, variant=v, responses=len(keys[(m, c, v)]),
                           ok=status[(m, c, v)]["ok"], unscored=status[(m, c, v)]["unscored"])
                for (m, c, v) in keys]
        return ScoresSummary(source=self.source, rubric=self.rubric, judge=self.judge, items=self.items(),
                             responses=len({s.record.key for s in self.scores}), counts=self.counts(),
                             groups=rows)

    @classmethod
    def of(cls, summary: ScoresSummary, scores: Iterable[ItemScore]) -> ScoreSet:
        """Scores read back from a document."""
        return cls(source=summary.source, rubric=summary.rubric, scores=tuple(scores), judge=summary.judge)


@dataclass(frozen=True)
class JudgeContext:
    """What the judge reads about one response."""

    learner: str
    request: str
    reference: str
    response: str


@cache  # one class per item: building a pydantic model on every request is slow
def verdict_model(item: RubricItem) -> type[BaseModel]:
    """The pydantic class (and so the JSON Schema) of a judge's reply to `item`."""
    rating_type: Any = Literal[item.labels]  # a Literal over this item's labels only
    return create_model(
        f"Verdict{item.id}",
        rationale=(str, Field(max_length=MAX_RATIONALE_CHARS, description="one or two sentences")),
        rating=(rating_type, Field(description=f"one of: {', '.join(item.labels)}")),
    )


def request_text(messages: Sequence[Message]) -> str:
    """The tutoring request as plain text (system prompt marked, images named)."""
    parts = []
    for m in messages:
        head = "[system prompt]\n" if m.role == "system" else ""
        imgs = f"\n[{len(m.images)} image(s) attached]" if m.images else ""
        parts.append(f"{head}{m.content}{imgs}")
    return "\n\n".join(parts)


def reference_text(cell: Cell) -> str:
    """The correct answer and worked solution of the cell's item, for the judge."""
    q = cell.question
    bits = []
    if q.answers:
        bits.append(f"Correct answer: {', '.join(q.answers)}")
        value = q.metadata.get("answer_value")
        if value:
            bits[-1] += f" ({value})"
    if q.solution:
        bits.append(f"Worked solution: {q.solution}")
    desc = q.metadata.get("image_description")
    if q.images and desc:
        bits.append(f"The item's diagram shows: {desc}")
    return "\n".join(bits) or "(no reference given)"


def context_of(cell: Cell) -> JudgeContext:
    """The judge's view of a tutoring response; the learner is described whatever the condition."""
    return JudgeContext(learner=cell.profile.summary(), request=request_text(cell.record.messages),
                        reference=reference_text(cell), response=cell.record.response or "")


def item_messages(item: RubricItem, ctx: JudgeContext) -> list[Message]:
    """The judge request for one item of one response."""
    reply = ctx.response
    if len(reply) > MAX_RESPONSE_CHARS:
        reply = reply[:MAX_RESPONSE_CHARS] + "\n[... reply cut here for length]"
    options = "\n".join(f'- "{o.label}" (score {o.value}): {o.meaning}' for o in item.scale)
    user = (
        f"Learner: {ctx.learner}\n\n"
        f"What the tutor was given:\n<<<\n{ctx.request}\n>>>\n\n"
        f"Reference:\n{ctx.reference}\n\n"
        f"The tutor's reply:\n<<<\n{reply}\n>>>\n\n"
        f"Rubric question {item.id} ({item.name}): {item.question}\n"
        f"Criterion: {item.criterion}\n"
        f"Allowed labels:\n{options}\n\n"
        'Answer with one JSON object with two keys: "rationale", one or two sentences of your own about '
        'this reply, and "rating", one of the allowed labels.'
    )
    return [Message(role="system", content=JUDGE_SYSTEM), Message(role="user", content=user)]


def judge_config(max_tokens: int = 160) -> GenerateConfig:
    """Greedy decoding with room for a short rationale (bounded in the schema too)."""
    return GenerateConfig(max_tokens=max_tokens, temperature=0.0, repeat_penalty=1.1)


async def judge_item(model: Model, item: RubricItem, ctx: JudgeContext,
                     config: GenerateConfig | None = None) -> ItemVerdict:
    """Score one item of one response; never raises for model trouble."""
    source = f"judge:{model.spec}"
    result = await generate_structured(model, item_messages(item, ctx), verdict_model(item),
                                       config or judge_config())
    if result.status != "ok" or result.value is None:
        return ItemVerdict(item_id=item.id, source=source, status="unscored",
                           error=f"{result.status}: {result.error}", raw=list(result.raw))
    label = str(result.value.rating)  # type: ignore[attr-defined]
    return ItemVerdict(item_id=item.id, source=source, status="ok", score=item.value_of(label), label=label,
                       rationale=str(result.value.rationale),  # type: ignore[attr-defined]
                       raw=list(result.raw))


@dataclass(frozen=True)
class JudgeJob:
    """One response to score, or the reason it cannot be scored."""

    record: RecordRef
    context: JudgeContext | None
    skip_reason: str | None = None


def job_of(cell: Cell) -> JudgeJob:
    """A tutor record as a judge job; a failed request is not judged."""
    ref = RecordRef.of(cell.record)
    if cell.record.status != "ok" or cell.record.response is None:
        return JudgeJob(ref, None, f"the tutoring request failed: {cell.record.error or 'no response'}")
    return JudgeJob(ref, context_of(cell))


async def judge_jobs(model: Model, jobs: Sequence[JudgeJob], items: Sequence[RubricItem],
                     config: GenerateConfig | None = None,
                     on_score: Callable[[ItemScore], None] | None = None) -> list[ItemScore]:
    """Score every job on every item, in job-then-item order."""
    source = f"judge:{model.spec}"

    async def one(job: JudgeJob, item: RubricItem) -> ItemScore:
        if job.context is None:
            verdict = ItemVerdict(item_id=item.id, source=source, status="unscored", error=job.skip_reason)
        else:
            verdict = await judge_item(model, item, job.context, config)
        score = ItemScore(record=job.record, **verdict.model_dump())
        if on_score is not None:
            on_score(score)
        return score

    return list(await asyncio.gather(*(one(j, i) for j in jobs for i in items)))


def judge_identity(model: Model) -> dict[str, Any]:
    """What a scores document records about its judge."""
    return {"spec": model.spec, "identity": model.identity()}
