"""One entry shape for every judged response: a `Judgement` of one record by one grader.

A grader is a judge model (`judge:<spec>`, with `judge_run` 0, 1, ... when it was asked more
than once) or a person (`human:<name>`, from a worksheet). The judgement holds one `UnitScore`
per unit the grader was asked about; a unit without a value is unscored, with the reason in its
`error` ("left blank", the judge's failure). A judge whose whole reply was unusable leaves
`scores` empty and says why in the judgement's `error`.

`status` is `graded` when every unit of the judgement has a value, and `total` is then the sum
of the values; otherwise the judgement is `ungraded` and `total` is None, so an incomplete grade
is never read as a low one. `max_total` is the most the record could earn.

The calculus grades (`grades`, `human_grades`) and the tutoring scores (`tutor_scores`,
`tutor_human`) are all documents of `Judgement` entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.runs.documents import RecordRef

JudgementStatus = Literal["graded", "ungraded"]


class UnitScore(BaseModel):
    """One unit of one judgement: its value on the unit's scale (None: unscored), the label of an
    ordinal value, the unit's maximum, and the grader's reason."""

    unit: str
    value: float | None = None
    label: str | None = None
    max: float | None = None
    rationale: str = ""
    error: str = ""

    @property
    def status(self) -> Literal["ok", "unscored"]:
        return "ok" if self.value is not None else "unscored"

    @property
    def shown(self) -> int | float | None:
        """The value as a reader expects it (whole numbers without a decimal point)."""
        if self.value is None:
            return None
        return int(self.value) if float(self.value).is_integer() else self.value


class StepEvidence(BaseModel):
    """One step the flow analysis found invalid: where, what it says, and what was expected."""

    step: int
    text: str = ""
    expected: str = ""


class PartEvidence(BaseModel):
    """The answer check of one lettered part: what was read for it and what the check found."""

    label: str
    final_answer: str | None
    answer_check: str
    reference: str | None = None
    #: why no answer was read for the part (the token cap cut the response in it)
    note: str = ""

    def describe(self) -> str:
        said = f"'{self.final_answer}'" if self.final_answer else "none"
        ref = f" (reference: {self.reference})" if self.reference else ""
        why = f": {self.note}" if self.note else ""
        return f"  ({self.label}) {said}; {self.answer_check.replace('_', ' ')}{ref}{why}"


class Evidence(BaseModel):
    """mathlens' own checks of a response, shown to a judge that asks for them (calculus grading,
    on by default) and recorded with its judgement.

    A response to a question with lettered parts that answers them in turn is checked part by part
    (`parts`); `answer_check` is then the whole question's verdict, and `final_answer` its whole
    reading (None when the token cap cut the response before every part was answered)."""

    final_answer: str | None
    answer_check: str
    #: the reference the answer was compared with (None: none, or checked part by part)
    reference: str | None = None
    parts: list[PartEvidence] = Field(default_factory=list)
    #: whether the flow analysis had checked the response's steps
    flow_checked: bool = False
    first_invalid_step: int | None = None
    #: the steps the flow analysis found invalid, with the values it expected (first few)
    invalid_steps: list[StepEvidence] = Field(default_factory=list)

    @property
    def answered_parts(self) -> list[PartEvidence]:
        """The parts for which the response states an answer."""
        return [p for p in self.parts if p.final_answer]

    @property
    def incomplete(self) -> bool:
        """Some parts are answered and the whole is not: the token cap cut the response in a later one."""
        return self.answer_check == "no_answer" and bool(self.answered_parts)

    def _whole(self) -> str:
        return "incomplete (a part has no answer)" if self.incomplete else self.answer_check.replace("_", " ")

    def describe(self) -> list[str]:
        """The checks as sentences for the judge's prompt."""
        if self.parts:
            lines = ["- Final answer read part by part, each checked against its reference:",
                     *(p.describe() for p in self.parts), f"  whole question: {self._whole()}."]
        else:
            said = f"'{self.final_answer}'" if self.final_answer else "no final answer found"
            ref = f" (reference: {self.reference})" if self.reference else ""
            lines = [f"- Final answer read from the response: {said}; checked against the reference: "
                     f"{self.answer_check.replace('_', ' ')}{ref}."]
        if self.flow_checked and not self.invalid_steps:
            lines.append("- Step check: no step was found invalid (unchecked steps may still be wrong).")
        for step in self.invalid_steps:
            text = f" '{step.text}'" if step.text else ""
            expected = f"; expected {step.expected}" if step.expected else ""
            lines.append(f"- Step {step.step}{text} is invalid{expected}.")
        return lines


CheckKind = Literal["final_answer", "steps"]


class UnitCheck(BaseModel):
    """A unit that mathlens' own checks also read, beside the grader's value for it.

    For the final answer a decisive check supplies the unit's points (`used` = `checker`) unless the
    grade was asked of the judge alone; the judge's own points are kept in `judge_points`. For the
    steps the judge's points stand and the check only marks a disagreement."""

    unit: str
    kind: CheckKind
    #: what the check found, in words ("correct", "incorrect", "no final answer", "invalid step 3", ...)
    finding: str
    decisive: bool
    checker_points: float | None = None
    judge_points: float | None = None
    used: Literal["checker", "judge"] = "judge"
    disagrees: bool = False
    why: str = ""


class Judgement(BaseModel):
    """One record judged once by one grader."""

    record: RecordRef
    #: `judge:<model spec>` or `human:<name>`
    grader: str
    judge_run: int = 0
    status: JudgementStatus
    scores: list[UnitScore] = Field(default_factory=list)
    total: float | None = None
    max_total: float
    evidence: Evidence | None = None
    error: str = ""
    #: every reply of the judge, in request order (empty for people)
    raw: list[str] = Field(default_factory=list)
    #: the units mathlens' own checks also read (final answer, steps), with any disagreement
    checks: list[UnitCheck] = Field(default_factory=list)
    #: the grader's own total before a check replaced a unit's points (None: nothing replaced)
    judge_total: float | None = None

    @property
    def disagreements(self) -> list[UnitCheck]:
        """The checks whose finding the grader's points contradict."""
        return [c for c in self.checks if c.disagrees]

    @property
    def rater(self) -> str:
        """The grader, with judge runs after the first as graders of their own (`judge:x#run1`)."""
        return rater_name(self.grader, self.judge_run)

    def score(self, unit: str) -> UnitScore | None:
        """The score of `unit` (None when the judgement has none)."""
        return next((s for s in self.scores if s.unit == unit), None)

    def values(self) -> dict[str, float]:
        """unit -> value, for the units that were scored."""
        return {s.unit: s.value for s in self.scores if s.value is not None}

    def own_values(self) -> dict[str, float]:
        """`values()` as the grader gave them: a unit whose points a check supplied has the grader's own."""
        own = {c.unit: c.judge_points for c in self.checks if c.used == "checker" and c.judge_points is not None}
        return {**self.values(), **{u: v for u, v in own.items() if u in self.values()}}


def rater_name(grader: str, judge_run: int) -> str:
    """`grader`, or `grader#run<k>` for the k-th repeated judge run."""
    return grader if judge_run == 0 else f"{grader}#run{judge_run}"


def settle(record: RecordRef, grader: str, scores: Sequence[UnitScore], max_total: float, *,
           expected: int, judge_run: int = 0, error: str = "", missing: str = "units unscored",
           raw: Sequence[str] = (), evidence: Evidence | None = None) -> Judgement:
    """A judgement from its unit scores: `graded` with a total when all `expected` units have a
    value (and there is no `error`), else `ungraded` with `error`, or `"<n> <missing>"` counting
    the units without a value ("2 items unscored", "1 criteria left blank")."""
    scored = [s for s in scores if s.value is not None]
    complete = len(scored) == expected and not error
    if not complete and not error:
        error = f"{expected - len(scored)} {missing}"
    return Judgement(record=record, grader=grader, judge_run=judge_run, status="graded" if complete else "ungraded",
                     scores=list(scores), total=sum(s.value or 0.0 for s in scored) if complete else None,
                     max_total=max_total, evidence=evidence, error=error, raw=list(raw))
