"""The verdict models of the final-answer check (what the answers document stores).

Kept apart from `equivalence.py` so that reading a stored verdict imports no SymPy.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from mathlens.analyze.readers.answers import AnswerSpan, How

EquivalenceStatus = Literal["equal", "different", "unparseable", "timeout"]
#: ``no_answer``: the token cap cut the response before it stated one (`check_answer(..., cut=True)`)
VerdictStatus = Literal["correct", "incorrect", "unparseable", "unverifiable", "no_reference", "no_answer"]
ChoiceForm = Literal["label", "value_only", "none"]


class EquivalenceResult(BaseModel):
    """How two answers compare, with the forms they were compared in."""

    model_config = ConfigDict(frozen=True)

    status: EquivalenceStatus
    method: str
    predicted_form: str | None = None
    reference_form: str | None = None
    error: str = ""

    @property
    def equal(self) -> bool:
        """True when the two answers were found equal."""
        return self.status == "equal"


# -- verdicts on responses ---------------------------------------------------------------------
class ChoiceCheck(BaseModel):
    """Multiple choice: the label given (or inferred from a value), and how it was given."""

    model_config = ConfigDict(frozen=True)

    label: str | None
    expected: str | None
    form: ChoiceForm


class PartVerdict(BaseModel):
    """The verdict on one lettered part."""

    model_config = ConfigDict(frozen=True)

    label: str
    status: VerdictStatus
    predicted: str | None
    reference: str | None
    comparison: EquivalenceResult | None = None
    #: where in the response this part's answer was read, and why
    span: AnswerSpan | None = None
    #: why no answer was read (`no_answer`: the token cap cut the response in this part)
    note: str = ""


class AnswerVerdict(BaseModel):
    """The verdict on a response's final answer, with everything it was based on.

    `predicted` is the answer as read, `how` the place it was read from (a box, an answer line,
    "the answer is", the last equation...) and `span` the stretch of the response it was read
    from (`start`/`end` offsets into the response, and that text), so a reader can see it.
    """

    model_config = ConfigDict(frozen=True)

    status: VerdictStatus
    predicted: str | None
    reference: str | None
    how: How = "none"
    span: AnswerSpan | None = None
    comparison: EquivalenceResult | None = None
    parts: list[PartVerdict] = []
    choice: ChoiceCheck | None = None
    note: str = ""

    @property
    def correct(self) -> bool:
        """True only for a `correct` verdict."""
        return self.status == "correct"

    @property
    def by_parts(self) -> bool:
        """Whether the answer was read part by part: some lettered part has a reading of its own
        (when none has, the whole reading is all the response answered)."""
        return any(p.predicted is not None for p in self.parts)

    @property
    def stated(self) -> str | None:
        """The answer as a reader is shown it: read part by part, each part's reading ("(a) 3; (b)
        none"), not the whole reading the parts were taken from; otherwise `predicted`."""
        if not self.by_parts:
            return self.predicted
        return "; ".join(f"({p.label}) {p.predicted if p.predicted is not None else 'none'}" for p in self.parts)
