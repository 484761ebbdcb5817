"""Entry points shipped to the worker by reference: pickling them names this light module, so the
caller does not import the step checker (and SymPy) to send work; the worker imports it on use."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mathlens.analyze.verify.reading import Reading
    from mathlens.analyze.verify.results import StepMath


def step_call(text: str, ctx_data: bytes | None, reading: Reading, advance: int,
              skipped: bool) -> tuple[StepMath, bytes]:
    """Check one step in the worker (`steps.step_in_worker`)."""
    from mathlens.analyze.verify.steps import step_in_worker

    return step_in_worker(text, ctx_data, reading, advance, skipped)


def question_call(question: str, reading: Reading) -> bytes:
    """Read the question's definitions in the worker (`steps.question_in_worker`)."""
    from mathlens.analyze.verify.steps import question_in_worker

    return question_in_worker(question, reading)
