"""A judge model scores each rubric item of each response separately, with a rationale.

This is the tutoring rubric's use of the judging core (`mathlens.analyze.judging`): every item is
its own request (`per_unit`), constrained to a small JSON Schema, `{"rationale": str, "rating":
one of the item's labels}`; the conversation is written by `item_messages` (who the learner is,
what the tutor was given, the reference, the reply, the item). A reply that still fails
validation after the repair retry, or a failed model call, leaves the item unscored with the
reason; it never becomes a zero.

The judge's scores are the document `TUTOR_SCORES` (`RUN/analysis/tutor_scores.jsonl`), schema
version 2: one `Judgement` entry per response (its `record`, and one `UnitScore` per item scored:
value, label, rationale, or the reason it is unscored), and a `ScoresSummary` with the judge, the
items scored and the item counts (`ok` / `unscored`) per (model, context condition, learner
profile). Version 1 had one entry per response x item.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from mathlens.analyze.judging.entries import Judgement, UnitScore
from mathlens.analyze.judging.request import JudgeJob, RequestOptions, ask_unit, judge_jobs, unit_reply_model
from mathlens.analyze.judging.units import Ordinal, Target, Unit
from mathlens.models.base import Message
from mathlens.models.model import Model
from mathlens.runs.documents import DocumentSpec
from mathlens.runs.records import ModelEntry

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


class ScoreGroup(BaseModel):
    """Item counts of one (model, context condition, learner profile) cell of the design."""

    model: str
    configuration: str
    variant: str
    responses: int
    ok: int
    unscored: int


class ScoresSummary(BaseModel):
    """The summary line of a scores document (judge or human)."""

    grader: str
    rubric: str
    #: the judge model as named, with its backend's identity (None for people)
    judge: ModelEntry | None = None
    items: list[str] = Field(default_factory=list)
    responses: int = 0
    #: item scores by status: `ok`, `unscored`
    counts: dict[str, int] = Field(default_factory=dict)
    groups: list[ScoreGroup] = Field(default_factory=list)


TUTOR_SCORES = DocumentSpec("tutor_scores", 2, Judgement, ScoresSummary, rerun="mathlens tutor score RUN --judge MODEL")


def item_order(unit: str) -> tuple[int, str]:
    """Q1, Q2, ..., Q19 (not Q1, Q10, ...)."""
    return (int(unit[1:]) if unit[1:].isdigit() else 999, unit)


@dataclass(frozen=True)
class ScoreSet:
    """All judgements from one grader (`judge:<spec>` or `human:<name>`), in memory."""

    grader: str
    rubric: str
    judgements: tuple[Judgement, ...]
    judge: ModelEntry | None = None

    def unit_scores(self) -> list[tuple[Judgement, UnitScore]]:
        """Every item score with the judgement it belongs to."""
        return [(j, s) for j in self.judgements for s in j.scores]

    def values(self) -> dict[tuple[str, str], UnitScore]:
        """(record key, item id) -> the item's score."""
        return {(j.record.key, s.unit): s for j, s in self.unit_scores()}

    def counts(self) -> dict[str, int]:
        """How many item scores have each status (`ok`, `unscored`)."""
        return dict(Counter(s.status for _, s in self.unit_scores()))

    def items(self) -> list[str]:
        """The rubric items scored, in rubric order (Q1, Q2, ..., Q19)."""
        return sorted({s.unit for _, s in self.unit_scores()}, key=item_order)

    def summary(self) -> ScoresSummary:
        """The typed summary of these scores, with item counts per design cell."""
        keys: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        status: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
        for j in self.judgements:
            keys[j.record.group].add(j.record.key)
            status[j.record.group].update(s.status for s in j.scores)
        rows = [ScoreGroup(model=m, configuration=c, variant=v, responses=len(keys[(m, c, v)]),
                           ok=status[(m, c, v)]["ok"], unscored=status[(m, c, v)]["unscored"])
                for (m, c, v) in keys]
        return ScoresSummary(grader=self.grader, rubric=self.rubric, judge=self.judge, items=self.items(),
                             responses=len({j.record.key for j in self.judgements}), counts=self.counts(),
                             groups=rows)

    @classmethod
    def of(cls, summary: ScoresSummary, judgements: Iterable[Judgement]) -> ScoreSet:
        """Scores read back from a document."""
        return cls(grader=summary.grader, rubric=summary.rubric, judgements=tuple(judgements), judge=summary.judge)


@dataclass(frozen=True)
class JudgeContext:
    """What the judge reads about one response."""

    learner: str
    request: str
    reference: str
    response: str


def verdict_model(item: RubricItem) -> type[BaseModel]:
    """The pydantic class (and so the JSON Schema) of a judge's reply to `item`."""
    return unit_reply_model(item.unit, MAX_RATIONALE_CHARS)


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


def item_messages(item: RubricItem | Unit, ctx: JudgeContext) -> list[Message]:
    """The judge request for one item of one response."""
    unit = item.unit if isinstance(item, RubricItem) else item
    reply = ctx.response
    if len(reply) > MAX_RESPONSE_CHARS:
        reply = reply[:MAX_RESPONSE_CHARS] + "\n[... reply cut here for length]"
    scale = unit.scale
    labels = scale.options if isinstance(scale, Ordinal) else ()
    options = "\n".join(f'- "{o.label}" (score {o.value}): {o.meaning}' for o in labels)
    user = (
        f"Learner: {ctx.learner}\n\n"
        f"What the tutor was given:\n<<<\n{ctx.request}\n>>>\n\n"
        f"Reference:\n{ctx.reference}\n\n"
        f"The tutor's reply:\n<<<\n{reply}\n>>>\n\n"
        f"Rubric question {unit.id} ({unit.name}): {unit.instruction}\n"
        f"Allowed labels:\n{options}\n\n"
        'Answer with one JSON object with two keys: "rationale", one or two sentences of your own about '
        'this reply, and "rating", one of the allowed labels.'
    )
    return [Message(role="system", content=JUDGE_SYSTEM), Message(role="user", content=user)]


def judge_config(max_tokens: int = 160) -> RequestOptions:
    """Greedy decoding with room for a short rationale (bounded in the schema too), one request
    per item."""
    return RequestOptions(max_tokens=max_tokens, temperature=0.0, repeat_penalty=1.1, per_unit=True,
                          max_rationale_chars=MAX_RATIONALE_CHARS, missing="items unscored")


def prompt_for(ctx: JudgeContext) -> Callable[[Sequence[Unit]], list[Message]]:
    """The core's prompt hook for one response: one item per request."""

    def prompt(units: Sequence[Unit]) -> list[Message]:
        (unit,) = units
        return item_messages(unit, ctx)

    return prompt


async def judge_item(model: Model, item: RubricItem, ctx: JudgeContext,
                     options: RequestOptions | None = None) -> UnitScore:
    """Score one item of one response; never raises for model trouble (the item is unscored)."""
    score, _ = await ask_unit(model, prompt_for(ctx), item.unit, options or judge_config())
    return score


def job_of(cell: Cell, items: Sequence[RubricItem]) -> JudgeJob:
    """A tutor record as a judge job on `items`; a failed request is not judged."""
    target = Target(record=cell.ref, units=tuple(i.unit for i in items))
    if cell.record.status != "ok" or cell.record.response is None:
        return JudgeJob(target, None, f"the tutoring request failed: {cell.record.error or 'no response'}")
    return JudgeJob(target, prompt_for(context_of(cell)))


async def judge_cells(model: Model, jobs: Sequence[JudgeJob], options: RequestOptions | None = None,
                      on_done: Callable[[Judgement], None] | None = None) -> list[Judgement]:
    """Judge every job on its items: one judgement per response, in job order."""
    return await judge_jobs(model, jobs, options or judge_config(), on_done)
