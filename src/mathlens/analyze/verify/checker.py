"""``verify_steps``: check every claim of a solution, one step at a time, each step under its own
time budget in a killable worker (`budget.run_bounded`).

This module imports no SymPy: each step is read and checked inside the worker
(`steps.step_in_worker`), and the definitions passed from step to step (the `Context`) travel as
pickled bytes that only the worker opens. A caller that only wants verdicts therefore pays
neither SymPy's import nor its start-up; the worker does, once, and `budget.prestart` starts it
in the background before it is needed.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from mathlens.analyze.verify.budget import prestart, run_bounded
from mathlens.analyze.verify.extract import extract_math
from mathlens.analyze.verify.pieces import WORDED_ARITHMETIC
from mathlens.analyze.verify.reading import reading_for
from mathlens.analyze.verify.results import StepMath, StepStatus, VerifyConfig
from mathlens.analyze.verify.steps_entry import question_call, step_call

if TYPE_CHECKING:
    from mathlens.analyze.verify.code import StepCode

__all__ = ["prestart", "verify_steps"]

# Less than this left of the solution's budget: the remaining steps are skipped.
_MIN_STEP_S = 0.05


#: words of the whole-number facts read from prose ("the remainder when 2006 is divided by 7 is 4")
_NUMBER_FACTS = re.compile(r"remainder|\bR\b|gcd|gcf|hcf|lcm|divisor|multiple|factor|\bmod\b|≡|\\equiv", re.I)


def has_checkable(text: str) -> bool:
    """Whether a step has anything the checker reads: math, or a whole-number fact in words.

    >>> has_checkable("We note that it holds."), has_checkable("So 2 + 3 = 5.")
    (False, True)
    """
    return bool(_NUMBER_FACTS.search(text)) or bool(extract_math(text, max_spans=1)) \
        or bool(WORDED_ARITHMETIC.search(text))  # "3 times 4 is 12"


def verify_steps(step_texts: list[str], question: str | None = None,
                 config: VerifyConfig | None = None) -> list[StepMath]:
    """Check each step of a solution in order, each under `config.step_timeout_s`.

    The question's definitions (``f(x, y) = x^2 y``) are read first; the definitions each step
    makes (``A = -14``, ``g(x) = ...``) are passed on to later steps. A step over its budget is
    ``timeout``; once the whole solution's budget is spent, the remaining steps are ``skipped``.
    """
    config = config or VerifyConfig()
    started = time.perf_counter()
    reading = reading_for([question or "", *step_texts])
    ctx: bytes | None = None
    if question and config.solution_budget_s >= _MIN_STEP_S:
        got = run_bounded(question_call, question, reading, ready_s=config.solution_budget_s,
                          timeout_s=min(config.step_timeout_s, config.solution_budget_s))
        if got.status == "ok":
            ctx = got.value
    results: list[StepMath] = []
    spans = 0
    advance = skipped = 0  # steps since the context was last used; of them, left out here
    texts, code = _code_blocks(step_texts)
    for text in texts:
        if results:
            advance += 1
        if not has_checkable(text):
            # Prose without math or number facts: nothing for the worker, no round trip to pay.
            results.append(StepMath("ok"))
            skipped += 1
            continue
        # A step may use what is left of the solution's budget, not more: the budget holds
        # inside long steps too, not only between them.
        left = config.solution_budget_s - (time.perf_counter() - started)
        if left < _MIN_STEP_S:
            results.append(StepMath("skipped", error="the solution's time budget was spent"))
            continue
        if spans >= config.max_spans:
            results.append(StepMath("skipped", error=f"the solution's limit of {config.max_spans} math "
                                                     "snippets was reached"))
            continue
        budget = min(config.step_timeout_s, left)
        # Waiting for a replacement worker counts against the solution too: never past its budget.
        got = run_bounded(step_call, text, ctx, reading, advance, skipped > 0, timeout_s=budget, ready_s=left)
        advance = skipped = 0
        if got.status == "ok":
            step, ctx = got.value
            spans += step.spans
            results.append(replace(step, elapsed_s=got.elapsed_s))
        else:
            status: StepStatus = "timeout" if got.status == "timeout" else "error"
            results.append(StepMath(status, error=got.error, elapsed_s=got.elapsed_s))
    return [_with_code(step, code.get(i)) for i, step in enumerate(results)]


def _code_blocks(step_texts: list[str]) -> tuple[list[str], dict[int, StepCode]]:
    """Code blocks are read as code (`code.py`, imported only for a text with a fence); the prose
    reader gets the steps without them."""
    if not any("```" in text for text in step_texts):
        return step_texts, {}
    from mathlens.analyze.verify.code import read_code

    reading = read_code(step_texts)
    return reading.texts, reading.steps


def _with_code(step: StepMath, code: StepCode | None) -> StepMath:
    """`step` with what code blocks put in it: the names assigned and read there, and the claims
    of an output block (`code.py`)."""
    if code is None:
        return step
    return replace(step, claims=step.claims + tuple(code.claims),
                   defines=step.defines + tuple(n for n in code.defines if n not in step.defines),
                   mentions=step.mentions + tuple(n for n in code.mentions if n not in step.mentions),
                   produces=step.produces + tuple(k for k in code.produces if k not in step.produces),
                   parsed=step.parsed + code.statements)
