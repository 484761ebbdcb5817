"""mathlens's checks as Inspect scorers: `answer()` and `steps()`, usable in any Inspect task.

    from inspect_ai import Task
    from mathlens.integrations.inspect import answer, steps

    Task(dataset=..., solver=generate(), scorer=[answer(), steps()])

`answer()` reads the final answer of the model's output and compares it with the sample's target
(`mathlens.check_answer`: numbers, fractions, LaTeX, symbolic expressions, sets, intervals, words;
several targets are several accepted answers; a sample with choices is multiple choice): the value
is `C` (correct) or `I`, and `N` when the output hit the token limit (stop reason `max_tokens` or
`model_length`) before it stated an answer (a reading from where the work stopped is not one);
`answer` is the answer read; `metadata` holds mathlens's verdict word (`correct`, `incorrect`,
`unparseable`, `unverifiable`, `no_reference`, `no_answer`), how the two answers were
compared and where in the output the answer was read (`span`: offsets and text). `steps()`
checks every step of the output (`mathlens.verify_steps`, with the sample's input as the question,
whose definitions the steps may use): `I` when a step states something
false, `C` when some step was checked and none is false, `N` when nothing could be checked; its
`metadata` holds every step's verdict, claims (with what a false claim's left side really is) and
confidence, and the index of the first false step. Both run the symbolic work in mathlens's
worker process under its time budget, off Inspect's event loop.

Requires `inspect-ai` (`pip install 'mathlens[interop]'`).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from mathlens.api import StepCheck, check_answer, verify_steps

#: Inspect's stop reasons for an output the token limit cut
CUT_REASONS = frozenset({"max_tokens", "model_length"})


def _choices(state: TaskState) -> list[str] | None:
    values = [c.value for c in state.choices] if state.choices else []
    return values or None


@scorer(metrics=[accuracy(), stderr()], name="mathlens_answer")
def answer(timeout_s: float = 3.0) -> Scorer:
    """The final answer against the target, by mathlens's answer check (module notes)."""
    from anyio import to_thread

    from mathlens.analyze.grading.equivalence import EquivalenceConfig

    config = EquivalenceConfig(timeout_s=timeout_s)

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion or ""
        refs = [t for t in target.target if t.strip()]
        cut = state.output.stop_reason in CUT_REASONS
        verdict = await to_thread.run_sync(
            lambda: check_answer(completion, refs, question=state.input_text, choices=_choices(state), config=config,
                                 cut=cut))
        method = verdict.comparison.method if verdict.comparison is not None else None
        value = {"correct": CORRECT, "no_answer": NOANSWER}.get(verdict.status, INCORRECT)
        return Score(value=value, answer=verdict.predicted,
                     explanation=f"no_answer: {verdict.note}" if verdict.status == "no_answer" else
                     f"{verdict.status}: read {verdict.predicted!r}, reference {verdict.reference!r}"
                     + (f" ({method})" if method else ""),
                     metadata={"status": verdict.status, "how": verdict.how, "method": method,
                               "reference": verdict.reference, "note": verdict.note or None,
                               # where in the output the answer was read (character offsets)
                               "span": verdict.span.model_dump(mode="json") if verdict.span else None})

    return score


def _step_metadata(checked: list[StepCheck]) -> dict[str, Any]:
    first = next((s.index for s in checked if s.invalid), None)
    return {
        "first_invalid_step": first,
        "invalid_steps": sum(s.verdict == "invalid" for s in checked),
        "valid_steps": sum(s.verdict == "valid" for s in checked),
        "steps": [{"index": s.index, "text": s.text, "verdict": s.verdict, "status": s.status,
                   "confidence": s.confidence,
                   "claims": [{"text": c.text, "status": c.status, "expected": c.expected or None,
                               "kind": c.kind or None} for c in s.claims]} for s in checked],
    }


@scorer(metrics=[accuracy(), stderr()], name="mathlens_steps")
def steps() -> Scorer:
    """Every step of the output checked, the step verdicts in the score's metadata (module notes)."""
    from anyio import to_thread

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion or ""
        checked = await to_thread.run_sync(lambda: verify_steps(completion, state.input_text))
        meta = _step_metadata(checked)
        if meta["invalid_steps"]:
            bad = checked[meta["first_invalid_step"]]
            claim = next(c for c in bad.claims if c.status == "invalid")
            should = f" (it is {claim.expected})" if claim.expected else ""
            return Score(value=INCORRECT, answer=bad.text, metadata=meta,
                         explanation=f"step {bad.index + 1} is false: {claim.text}{should}")
        value = CORRECT if meta["valid_steps"] else NOANSWER
        return Score(value=value, answer=None, metadata=meta,
                     explanation=f"{meta['valid_steps']} of {len(checked)} steps checked true, none false"
                     if meta["valid_steps"] else "nothing in the output could be checked")

    return score
