"""Asking a judge model to score units, and checking what it replies.

One call path for every rubric. A `JudgeJob` is a `Target` (a record and its units) with the
rubric's `Prompt` hook, the function that writes the judge's conversation for some of the units
(who the learner is, what was asked, the reference, the response, mathlens' own checks). The
judge is asked either about all units of a response in one request (calculus grading) or about
one unit per request (`per_unit`, the tutoring rubric). Each request goes through
`generate_structured` with a reply schema built from the units' scales:

- a `Points` unit is `{"points": 0..max, "rationale": ...}`;
- an `Ordinal` unit is `{"rationale": ..., "rating": one of its labels}` (reason first, then
  the label);
- all units at once is one object with a field per unit id holding the above.

The reply is validated again here (`read_reply`): every unit present, points finite and within
bounds, labels on the scale. A failed model call or an unusable reply never becomes a zero: the
unit (or, for an all-units request, the judgement) is left unscored with the reason and the raw
replies. Judge run k uses seed `seed + k`, so repeated runs (`runs`) measure the judge's
agreement with itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model
from mathlens.models.structured import generate_structured

from .entries import Evidence, Judgement, UnitScore, settle
from .units import Ordinal, Points, Target, Unit

#: writes the judge's conversation about the given units of one response
Prompt = Callable[[Sequence[Unit]], list[Message]]


@dataclass(frozen=True)
class Sampling:
    """How each judge request is sampled: the reply's token cap, the temperature, and the seed of
    the first run. `runs` > 1 repeats every request with seeds seed, seed+1, ..."""

    max_tokens: int = 768
    temperature: float = 0.0
    seed: int = 1234
    runs: int = 1

    def sampling(self) -> dict[str, Any]:
        """These fields alone, by name (for options of another kind that sample alike)."""
        return {f.name: getattr(self, f.name) for f in fields(Sampling)}


@dataclass(frozen=True)
class RequestOptions(Sampling):
    """How a judge is asked (the sampling, and how the requests are made and read)."""

    repeat_penalty: float = 1.0
    #: one request per unit (else one request per response for all its units)
    per_unit: bool = False
    max_rationale_chars: int = 1000
    #: how a judgement with unscored units says so ("2 items unscored")
    missing: str = "units unscored"

    def config(self, judge_run: int = 0) -> GenerateConfig:
        return GenerateConfig(max_tokens=self.max_tokens, temperature=self.temperature,
                              seed=self.seed + judge_run, repeat_penalty=self.repeat_penalty)


@dataclass(frozen=True)
class JudgeJob:
    """One response to judge; `prompt` None when it cannot be (`skip` says why)."""

    target: Target
    prompt: Prompt | None
    skip: str = ""
    #: what mathlens' own checks found, shown in the prompt and kept with the judgement
    evidence: Evidence | None = None


# -- reply schemas ---------------------------------------------------------------------------
def _value_field(unit: Unit) -> tuple[str, Any]:
    scale = unit.scale
    if isinstance(scale, Points):
        top = round(scale.max, 6)
        return "points", (float, Field(ge=0, le=top, description=f"0 to {top:g}"))
    rating: Any = Literal[scale.labels]  # a Literal over this unit's labels only
    return "rating", (rating, Field(description=f"one of: {', '.join(scale.labels)}"))


@cache  # one class per unit and length: building a pydantic model on every request is slow
def unit_reply_model(unit: Unit, max_rationale_chars: int = 1000, name: str = "") -> type[BaseModel]:
    """The reply about one unit: the value and a rationale (an ordinal unit gives its reason
    first, then the label)."""
    key, value = _value_field(unit)
    if isinstance(unit.scale, Ordinal):
        rationale = (str, Field(max_length=max_rationale_chars, description="one or two sentences"))
        return create_model(name or f"Verdict{unit.id}", rationale=rationale, **{key: value})
    return create_model(name or f"Verdict{unit.id}", **{key: value},
                        rationale=(str, Field(max_length=max_rationale_chars)))


def reply_model(units: Sequence[Unit], max_rationale_chars: int = 1000) -> type[BaseModel]:
    """The reply about several units at once: one field per unit id."""
    fields: dict[str, Any] = {u.id: (unit_reply_model(u, max_rationale_chars, f"Score_{u.id}"), ...)
                              for u in units}
    return create_model("RubricVerdict", **fields)


def read_unit(unit: Unit, reply: BaseModel | None) -> tuple[UnitScore | None, str]:
    """The score a reply gives `unit`, or (None, why it is unusable)."""
    if reply is None:
        return None, f"{unit.id} missing"
    scale = unit.scale
    if isinstance(scale, Points):
        value = float(getattr(reply, "points", float("nan")))
        problem = scale.problem(value, unit.id)
        label = None
    else:
        label = str(getattr(reply, "rating", ""))
        found = scale.value_of(label)
        problem = "" if found is not None else f"{unit.id}: {label!r} is not one of {scale.allowed}"
        value = float(found) if found is not None else 0.0
    if problem:
        return None, problem
    return UnitScore(unit=unit.id, value=value, label=label, max=scale.top,
                     rationale=str(getattr(reply, "rationale", ""))), ""


def read_reply(value: BaseModel, units: Sequence[Unit]) -> tuple[list[UnitScore], str]:
    """Every unit's score from an all-units reply, checked against its scale; `(scores, "")`, or
    `([], reason)` at the first unusable unit."""
    scores = []
    for unit in units:
        score, problem = read_unit(unit, getattr(value, unit.id, None))
        if score is None:
            return [], problem
        scores.append(score)
    return scores, ""


# -- asking ----------------------------------------------------------------------------------
async def ask_unit(model: Model, prompt: Prompt, unit: Unit, options: RequestOptions,
                   judge_run: int = 0) -> tuple[UnitScore, list[str]]:
    """One request about one unit: its score (unscored with the reason on any failure) and the
    raw replies."""
    result = await generate_structured(model, prompt([unit]), unit_reply_model(unit, options.max_rationale_chars),
                                       options.config(judge_run))
    if result.status != "ok" or result.value is None:
        return UnitScore(unit=unit.id, max=unit.scale.top, error=f"{result.status}: {result.error}"), list(result.raw)
    score, problem = read_unit(unit, result.value)
    return score or UnitScore(unit=unit.id, max=unit.scale.top, error=problem), list(result.raw)


async def judge(model: Model, job: JudgeJob, options: RequestOptions, judge_run: int = 0) -> Judgement:
    """Judge one response once. Never raises for a model or format failure: those are unscored."""
    target, grader = job.target, f"judge:{model.spec}"
    common: dict[str, Any] = {"expected": len(target.units), "judge_run": judge_run, "missing": options.missing,
                              "evidence": job.evidence}
    if job.prompt is None:
        if options.per_unit:
            skipped = [UnitScore(unit=u.id, max=u.scale.top, error=job.skip) for u in target.units]
            return settle(target.record, grader, skipped, target.max_total, error=job.skip, **common)
        return settle(target.record, grader, [], target.max_total, error=job.skip or "not judged", **common)
    if options.per_unit:
        prompt = job.prompt
        answers = await asyncio.gather(*(ask_unit(model, prompt, u, options, judge_run) for u in target.units))
        return settle(target.record, grader, [s for s, _ in answers], target.max_total,
                      raw=[r for _, raw in answers for r in raw], **common)
    result = await generate_structured(model, job.prompt(target.units),
                                       reply_model(target.units, options.max_rationale_chars),
                                       options.config(judge_run))
    if result.status != "ok" or result.value is None:
        return settle(target.record, grader, [], target.max_total, error=f"{result.status}: {result.error}",
                      raw=result.raw, **common)
    scores, problem = read_reply(result.value, target.units)
    return settle(target.record, grader, scores, target.max_total, error=problem, raw=result.raw, **common)


async def judge_jobs(model: Model, jobs: Sequence[JudgeJob], options: RequestOptions,
                     on_done: Callable[[Judgement], None] | None = None) -> list[Judgement]:
    """Judge every job `options.runs` times, concurrently; judgements in job-then-run order."""

    async def one(job: JudgeJob, run: int) -> Judgement:
        done = await judge(model, job, options, run)
        if on_done is not None:
            on_done(done)
        return done

    return list(await asyncio.gather(*(one(job, r) for job in jobs for r in range(options.runs))))
