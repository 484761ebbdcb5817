"""The hybrid step check: symbolic verdicts first, a judge model for the steps symbols cannot decide.

`hybrid_check(flow, question, judge)` takes a `FlowResult` (whose steps carry the SymPy verdicts)
and asks the judge only about the steps left `unverifiable` or with nothing to check, giving it
the symbolic verdicts of the other steps as evidence. The judge answers through
`generate_structured` with a typed verdict per step (`correct`, `incorrect`, `unsure`). Every
step's final verdict records where it came from:

* ``symbolic``: SymPy decided it (valid or invalid); the judge was not asked, or agreed
  (``both``), or disagreed (the symbolic verdict stands, `disagreement` is set and the judge's
  verdict is kept beside it);
* ``judge``: SymPy could not decide, the judge did;
* ``none``: neither decided (the judge was unsure, failed, or was not needed).

Judge calls go through the `Model` wrapper, so they are cached like every model call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.flow.models import FlowResult, HybridResult, HybridStep, JudgeWord, Verdict
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model
from mathlens.models.structured import generate_structured

#: Steps shown to the judge; longer solutions are cut (their later steps stay undecided).
MAX_STEPS = 40
MAX_STEP_CHARS = 600


class JudgedStepVerdict(BaseModel):
    """The judge's verdict on one step (1-based number as shown in the prompt)."""

    step: int = Field(..., ge=1)
    verdict: JudgeWord
    reason: str = Field("", max_length=240)


class StepJudgeReply(BaseModel):
    """The schema the judge must answer with."""

    steps: list[JudgedStepVerdict] = Field(default_factory=list, max_length=MAX_STEPS)


_WORD: dict[JudgeWord, Verdict] = {"correct": "valid", "incorrect": "invalid", "unsure": "unverifiable"}
_SYSTEM = (
    "You check the steps of a math solution. A step is correct when what it states follows from the "
    "question and the steps before it and its arithmetic and algebra are right; otherwise it is "
    "incorrect. Say unsure only when you cannot tell. Reply with JSON only."
)


def undecided_steps(flow: FlowResult) -> list[int]:
    """0-based steps SymPy did not decide: `unverifiable`, or no checkable claim at all."""
    return [s.index for s in flow.steps if s.verdict in ("unverifiable", "none")][:MAX_STEPS]


def build_messages(flow: FlowResult, question: str | None, asked: list[int]) -> list[Message]:
    """The judge prompt: the question, the numbered steps, the symbolic evidence, the steps to judge."""
    lines = [f"Question:\n{(question or '(not given)')[:4000]}", "", "Solution steps:"]
    for s in flow.steps[:MAX_STEPS]:
        lines.append(f"Step {s.index + 1}: {s.text[:MAX_STEP_CHARS]}")
    evidence = [_evidence(s.index, s.verdict, [c.text for c in s.claims if c.status == s.verdict])
                for s in flow.steps[:MAX_STEPS] if s.verdict in ("valid", "invalid")]
    if evidence:
        lines += ["", "A symbolic checker already decided these steps (trust it for arithmetic and algebra):",
                  *evidence]
    numbers = ", ".join(str(i + 1) for i in asked)
    lines += ["", f"Judge only steps {numbers}. For each, give its number, correct / incorrect / unsure and a "
                  "reason of at most ten words."]
    return [Message(role="system", content=_SYSTEM), Message(role="user", content="\n".join(lines))]


def _evidence(index: int, verdict: str, claims: list[str]) -> str:
    shown = "; ".join(c[:80] for c in claims[:3])
    return f"- Step {index + 1}: {verdict}" + (f" ({shown})" if shown else "")


def merge(flow: FlowResult, reply: StepJudgeReply | None, asked: list[int]) -> list[HybridStep]:
    """Combine the symbolic verdicts with the judge's (None when the judge gave nothing)."""
    said = {v.step - 1: v for v in reply.steps} if reply is not None else {}
    out = []
    for s in flow.steps:
        j = said.get(s.index)
        symbolic: Verdict = s.verdict
        if symbolic in ("valid", "invalid"):
            judged = _WORD[j.verdict] if j is not None else None
            agree = judged == symbolic
            out.append(HybridStep(
                index=s.index, verdict=symbolic, provenance="both" if agree else "symbolic", symbolic=symbolic,
                judge=j.verdict if j is not None else None, judge_reason=j.reason if j is not None else "",
                disagreement=judged in ("valid", "invalid") and not agree))
        elif j is not None and s.index in asked and j.verdict != "unsure":
            out.append(HybridStep(index=s.index, verdict=_WORD[j.verdict], provenance="judge", symbolic=symbolic,
                                  judge=j.verdict, judge_reason=j.reason))
        else:
            out.append(HybridStep(index=s.index, verdict=symbolic, provenance="none", symbolic=symbolic,
                                  judge=j.verdict if j is not None else None,
                                  judge_reason=j.reason if j is not None else ""))
    return out


async def hybrid_check(flow: FlowResult, question: str | None, judge: Model, max_tokens: int = 384) -> HybridResult:
    """The hybrid verdicts of one analysed solution (never raises for a judge failure)."""
    asked = undecided_steps(flow)
    if not asked:
        return _result("not_needed", judge.spec, merge(flow, None, []), [])
    got = await generate_structured(judge, build_messages(flow, question, asked), StepJudgeReply,
                                    GenerateConfig(max_tokens=max_tokens, temperature=0.0))
    if got.status != "ok" or got.value is None:
        return _result(got.status, judge.spec, merge(flow, None, asked), asked, got.error or "no reply")
    return _result("ok", judge.spec, merge(flow, got.value, asked), asked)


def _result(status: Literal["ok", "not_needed", "invalid", "error"], spec: str, steps: list[HybridStep],
            asked: list[int], error: str = "") -> HybridResult:
    first = next((s.index for s in steps if s.verdict == "invalid"), None)
    return HybridResult(status=status, judge=spec, steps=steps, asked=asked, first_invalid_step=first,
                        disagreements=sum(s.disagreement for s in steps), error=error[:500])
