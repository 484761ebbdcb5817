"""Grades reconciled with mathlens' own checks: a judge's rubric grade cannot contradict the checker.

Two rubric criteria are also read by a check that does not depend on a model (`Criterion.checked_by`):

* **final answer** (`final_answer`): when the answer checker reaches a decisive finding, the
  criterion's points come from it — all of them for a `correct` answer, none for an `incorrect`
  one, and none for a response that states no final answer (nothing was answered, so nothing can
  earn the points; a response cut by the token cap states none unless it marks an answer the cut
  did not reach: `readers.answers.cut_short`). A question with lettered parts is checked part by
  part and earns them only when every part is right: none when a part is wrong, and none when the
  cut left a part unanswered (`incomplete`: the parts answered before it are still shown to the
  judge with their verdicts). Any other verdict (the answer could not be read or compared) is
  undecided and the judge's points stand. With the policy `judge`
  (`mathlens grade --final-answer judge`) the judge's points always stand; the check is still
  recorded and disagreements still counted.
* **steps** (`steps`): the judge's points stand; full points on that criterion for a response in
  which the flow analysis found an invalid step are marked as a disagreement.

The judge "disagrees" on a decisive final answer when its points fall on the other side of half
the criterion's maximum: at least half for an answer the checker found wrong or missing, less than
half for one it found right. (The rubric lets a judge withhold some points from a right answer
reached by wrong work, so a small difference is not a contradiction.) Both the judge's own points
and the total they gave are kept in the grade (`UnitCheck.judge_points`, `Judgement.judge_total`).

A judge that disagrees with the checker on more than `UNRELIABLE_SHARE` (a fifth) of the decisive
final answers it graded is marked unreliable (`JudgeReliability`), with the counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from mathlens.analyze.grading.rubric import Rubric
from mathlens.analyze.judging.entries import Evidence, Judgement, UnitCheck
from mathlens.rounding import percent

FinalAnswerPolicy = Literal["checker", "judge"]
#: share of decisive final answers above which a judge that disagrees with the checker is unreliable
UNRELIABLE_SHARE = 0.2
#: checker findings that decide the final-answer points
DECISIVE = ("correct", "incorrect", "no final answer", "incomplete")


def answer_finding(evidence: Evidence) -> str:
    """The checker's finding on the final answer in words: `correct`, `incorrect`, `no final answer`,
    `incomplete` (a question with parts, some answered before the token cap cut the response in
    another), or an undecided verdict (`unparseable`, `unverifiable`, `no_reference`)."""
    if evidence.incomplete:
        return "incomplete"
    if evidence.parts and evidence.answer_check != "no_answer":
        return evidence.answer_check  # the whole reading may be hidden (a cut response) while parts stand
    if evidence.answer_check == "no_answer" or not evidence.final_answer:
        return "no final answer"
    return evidence.answer_check


def _final_answer_check(grade: Judgement, cid: str, top: float, evidence: Evidence,
                        policy: FinalAnswerPolicy) -> UnitCheck:
    score = grade.score(cid)
    judged = score.value if score is not None else None
    finding = answer_finding(evidence)
    decisive = finding in DECISIVE
    points = (top if finding == "correct" else 0.0) if decisive else None
    disagrees = False
    why = ""
    if decisive and judged is not None:
        judge_says_right = judged >= top / 2
        disagrees = judge_says_right != (finding == "correct")
        if disagrees:
            why = (f"the judge gave {judged:g} of {top:g} points for a final answer the checker found "
                   f"{finding}")
    used: Literal["checker", "judge"] = "checker" if decisive and policy == "checker" else "judge"
    return UnitCheck(unit=cid, kind="final_answer", finding=finding, decisive=decisive, checker_points=points,
                     judge_points=judged, used=used, disagrees=disagrees, why=why)


def _steps_check(grade: Judgement, cid: str, top: float, evidence: Evidence) -> UnitCheck | None:
    if not evidence.flow_checked:
        return None
    score = grade.score(cid)
    judged = score.value if score is not None else None
    invalid = evidence.first_invalid_step
    finding = f"invalid step {invalid}" if invalid is not None else "no invalid step found"
    disagrees = invalid is not None and judged is not None and judged >= top - 1e-9
    why = (f"the judge gave full points ({judged:g} of {top:g}) for the working although step {invalid} is invalid"
           if disagrees and judged is not None else "")
    return UnitCheck(unit=cid, kind="steps", finding=finding, decisive=invalid is not None, judge_points=judged,
                     used="judge", disagrees=disagrees, why=why)


def reconcile(grade: Judgement, rubric: Rubric, question_points: float | None,
              policy: FinalAnswerPolicy = "checker") -> Judgement:
    """`grade` with its checked criteria compared with mathlens' checks (see the module notes).

    A grade without evidence (a human's, or one made without the checks) is returned unchanged."""
    evidence = grade.evidence
    if evidence is None or grade.grader.startswith("human:"):
        return grade
    checks: list[UnitCheck] = []
    fa = rubric.checked("final_answer")
    if fa is not None:
        checks.append(_final_answer_check(grade, fa.id, rubric.max_points(fa.id, question_points), evidence, policy))
    st = rubric.checked("steps")
    if st is not None:
        step_check = _steps_check(grade, st.id, rubric.max_points(st.id, question_points), evidence)
        if step_check is not None:
            checks.append(step_check)
    replace = {c.unit: c.checker_points for c in checks if c.used == "checker" and c.checker_points is not None}
    if not replace or grade.status != "graded":
        return grade.model_copy(update={"checks": checks})
    scores = [s.model_copy(update={"value": replace[s.unit]}) if s.unit in replace else s for s in grade.scores]
    total = round(sum(s.value or 0.0 for s in scores), 6)  # points are sums of decimals: no 7.199999…
    return grade.model_copy(update={"checks": checks, "scores": scores, "total": total, "judge_total": grade.total})


class Disagreement(BaseModel):
    """One grade whose points contradict mathlens' check (listed in the grades summary)."""

    record: str
    exam_id: str
    question_id: str
    grader: str
    unit: str
    kind: Literal["final_answer", "steps"]
    finding: str
    judge_points: float | None
    checker_points: float | None
    why: str


class JudgeReliability(BaseModel):
    """How far a judge's grades agree with mathlens' checks, over the grades of one document.

    `decisive`: final answers the checker decided (correct, incorrect or none stated) that the judge
    also scored; `disagreements`: those where the judge's points contradict it; the judge is
    `unreliable` when `disagreements / decisive` exceeds `threshold`. `step_disagreements` counts
    full working points despite an invalid step (of `step_checked` responses with one)."""

    final_answer: FinalAnswerPolicy = "checker"
    threshold: float = UNRELIABLE_SHARE
    graded: int = 0
    decisive: int = 0
    undecided: int = 0
    disagreements: int = 0
    step_checked: int = 0
    step_disagreements: int = 0
    listed: list[Disagreement] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def share(self) -> float | None:
        """Share of decisive final answers on which the judge disagrees (None with none decisive)."""
        return self.disagreements / self.decisive if self.decisive else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unreliable(self) -> bool:
        """True when the judge disagrees with the checker on more than `threshold` of decisive answers."""
        share = self.share
        return share is not None and share > self.threshold

    def mark(self) -> str:
        """One line for a reader: the counts, and the unreliable mark when it applies."""
        if not self.decisive:
            return "judge vs checker: no decisive final answer to compare"
        head = "UNRELIABLE JUDGE: " if self.unreliable else "judge vs checker: "
        steps = (f"; full working points despite an invalid step on {self.step_disagreements} of "
                 f"{self.step_checked}" if self.step_checked else "")
        return (f"{head}disagrees on {self.disagreements} of {self.decisive} decisive final answers "
                f"(threshold {percent(self.threshold)}){steps}")


def judge_reliability(grades: Iterable[Judgement], policy: FinalAnswerPolicy = "checker") -> JudgeReliability:
    """Count and list every disagreement between the grades and mathlens' checks."""
    out = JudgeReliability(final_answer=policy)
    listed: list[Disagreement] = []
    for g in grades:
        if g.grader.startswith("human:"):
            continue
        out.graded += g.status == "graded"
        for c in g.checks:
            if c.kind == "final_answer":
                if c.decisive and c.judge_points is not None:
                    out.decisive += 1
                    out.disagreements += c.disagrees
                elif not c.decisive:
                    out.undecided += 1
            elif c.decisive and c.judge_points is not None:
                out.step_checked += 1
                out.step_disagreements += c.disagrees
            if c.disagrees:
                ref = g.record
                listed.append(Disagreement(record=ref.key, exam_id=ref.exam_id, question_id=ref.question_id,
                                           grader=g.rater, unit=c.unit, kind=c.kind, finding=c.finding,
                                           judge_points=c.judge_points, checker_points=c.checker_points,
                                           why=c.why))
    out.listed = listed
    return out
