"""Step judging and self-reflection through a model.

The judge's reply schema is built per request: label ids become an enum (so a backend's JSON-schema
constraint can only emit known labels) and step numbers are bounded by the number of steps (a
bound not every backend enforces; pydantic checks it and `generate_structured` asks once for a
repair). A reply that still does not fit, or a model failure, gives `status="unjudged"` with the
raw replies kept: the solution is then left out of MAPLE means and counted, never scored as zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from mathlens.analyze.maple.labels import LabelSet
from mathlens.analyze.maple.prompts import judge_messages, reflection_messages
from mathlens.errors import ModelError
from mathlens.models.base import GenerateConfig
from mathlens.models.model import Model
from mathlens.models.structured import generate_structured

MAX_REASON_CHARS = 300
#: Raw replies are stored for inspection, cut to this length.
MAX_RAW_CHARS = 2000


class JudgedStep(BaseModel):
    """One step the judge found erroneous (1-based `step`)."""

    step: int = Field(ge=1)
    labels: list[str] = Field(min_length=1)
    reason: str = ""
    source: Literal["judge", "detector"] = "judge"


class StepJudgement(BaseModel):
    """The judge's verdict on one solution. `steps` lists only erroneous steps."""

    status: Literal["ok", "unjudged"]
    steps: list[JudgedStep] = Field(default_factory=list)
    validity: float | None = None
    redundancy: float | None = None
    error: str = ""
    raw: list[str] = Field(default_factory=list)
    attempts: int = 0


class ReflectionRound(BaseModel):
    """One round of a reflection loop: one point where the solution departs from the reference."""

    round: int = Field(ge=1)
    text: str
    truncated: bool = False


class Reflection(BaseModel):
    """A model's reflection on its own incorrect solution.

    `text` holds every failing point (one per line for a loop); `rounds` the points one by one.
    A loop (`mode="loop"`) also records the model's self-check against the correct final answer,
    the number of rounds allowed and why it stopped (`done`: the model had no further point,
    `max_rounds`, `repeat`, `empty`, `error`)."""

    status: Literal["ok", "error"]
    text: str = ""
    model: str = ""
    error: str = ""
    truncated: bool = False
    mode: Literal["loop", "single"] = "single"
    self_check: str = ""
    self_check_verdict: Literal["match", "mismatch", "unclear"] | None = None
    rounds: list[ReflectionRound] = Field(default_factory=list)
    max_rounds: int = 1
    stopped: str = ""


@lru_cache(maxsize=512)
def judge_reply_model(label_ids: tuple[str, ...], n_steps: int, estimate_vr: bool = False) -> type[BaseModel]:
    """The pydantic class of a judge reply for this label set and number of steps."""
    label_type: Any = Literal[label_ids]
    step_cls = create_model(
        "ErroneousStep",
        __config__=ConfigDict(extra="forbid"),
        step=(int, Field(ge=1, le=max(n_steps, 1), description="number of the erroneous step")),
        labels=(list[label_type], Field(min_length=1, max_length=3)),
        reason=(str, Field(max_length=MAX_REASON_CHARS)),
    )
    fields: dict[str, Any] = {"erroneous_steps": (list[step_cls], Field(max_length=max(n_steps, 1)))}
    if estimate_vr:
        fields["validity"] = (float, Field(ge=0.0, le=1.0))
        fields["redundancy"] = (float, Field(ge=0.0, le=1.0))
    return create_model("JudgeReply", __config__=ConfigDict(extra="forbid"), **fields)


def judgement_from_reply(reply: BaseModel) -> StepJudgement:
    """Turn a validated reply into a `StepJudgement`, merging repeated entries for one step."""
    merged: dict[int, JudgedStep] = {}
    for item in reply.erroneous_steps:  # type: ignore[attr-defined]
        labels = list(dict.fromkeys(item.labels))
        reason = item.reason.strip()
        if item.step in merged:
            old = merged[item.step]
            labels = list(dict.fromkeys([*old.labels, *labels]))
            reason = "; ".join(r for r in (old.reason, reason) if r)
        merged[item.step] = JudgedStep(step=item.step, labels=labels, reason=reason)
    return StepJudgement(
        status="ok",
        steps=[merged[k] for k in sorted(merged)],
        validity=getattr(reply, "validity", None),
        redundancy=getattr(reply, "redundancy", None),
    )


async def judge_steps(
    model: Model,
    labels: LabelSet,
    question: str,
    steps: Sequence[str],
    reference_solution: str | None,
    reference_answer: str | None = None,
    config: GenerateConfig | None = None,
    estimate_vr: bool = False,
) -> StepJudgement:
    """Ask `model` which of `steps` are erroneous and why; `unjudged` when the reply is unusable."""
    if not steps:
        return StepJudgement(status="unjudged", error="the solution has no steps to judge")
    cls = judge_reply_model(tuple(labels.ids), len(steps), estimate_vr)
    messages = judge_messages(labels, question, steps, reference_solution, reference_answer, estimate_vr)
    out = await generate_structured(model, messages, cls, config or GenerateConfig(max_tokens=384))
    raw = [r[:MAX_RAW_CHARS] for r in out.raw]
    value = out.value
    if out.status != "ok" or value is None:
        return StepJudgement(status="unjudged", error=f"{out.status}: {out.error}", raw=raw, attempts=out.attempts)
    result = judgement_from_reply(value)
    return result.model_copy(update={"raw": raw, "attempts": out.attempts})


async def reflect(
    model: Model,
    question: str,
    solution: str,
    reference_solution: str | None,
    reference_answer: str | None,
    config: GenerateConfig | None = None,
) -> Reflection:
    """The model's account of where its incorrect solution departs from the reference."""
    messages = reflection_messages(question, solution, reference_solution, reference_answer)
    try:
        out = await model.generate(messages, config or GenerateConfig(max_tokens=160))
    except ModelError as exc:
        return Reflection(status="error", model=model.spec, error=str(exc))
    text = out.text.strip()
    if not text:
        return Reflection(status="error", model=model.spec, error="empty reflection")
    return Reflection(status="ok", text=text, model=model.spec, truncated=out.finish_reason == "length")
