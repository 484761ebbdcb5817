"""Grades reconciled with the checker: a decisive verdict supplies the final-answer points, an
undecided one leaves the judge's, disagreements are counted and a judge over a fifth is unreliable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.grading.reconcile import UNRELIABLE_SHARE, judge_reliability, reconcile
from mathlens.analyze.grading.rubric import builtin_rubric
from mathlens.analyze.judging.entries import Evidence, Judgement, UnitScore, settle
from mathlens.runs.documents import RecordRef

CASES = yaml.safe_load((Path(__file__).parents[1] / "cases" / "grading" / "reconcile.yaml").read_text())
RUBRIC = builtin_rubric("calculus")
FULL = {"method": 3.0, "execution": 4.0, "final_answer": 1.0, "notation": 1.0, "clarity": 1.0}


def _ref(i: int = 0) -> RecordRef:
    return RecordRef(key=f"m|b|e|q{i}|original|r0", model="m", configuration="b", exam_id="e", question_id=f"q{i}",
                     variant="original", variant_kind="original", repeat=0)


def _grade(points: dict[str, float], evidence: Evidence, i: int = 0) -> Judgement:
    values = {**FULL, **points}
    scores = [UnitScore(unit=c, value=v, max=FULL[c], rationale="r") for c, v in values.items()]
    return settle(_ref(i), "judge:embedded", scores, 10.0, expected=5, evidence=evidence)


def _evidence(check: str, invalid: int | None = None, flow: bool = False) -> Evidence:
    answer = None if check == "no_answer" else "<-8, 1>"
    return Evidence(final_answer=answer, answer_check=check, flow_checked=flow, first_invalid_step=invalid)


@pytest.mark.parametrize("case", CASES["decisive"], ids=[c["phenomenon"] for c in CASES["decisive"]])
def test_a_decisive_verdict_supplies_the_final_answer_points(case: dict[str, Any]) -> None:
    judged = {k: float(v) for k, v in case["judge"].items()}
    g = reconcile(_grade(judged, _evidence(case["answer_check"])), RUBRIC, 10)
    (check,) = [c for c in g.checks if c.kind == "final_answer"]
    assert check.decisive and check.used == "checker"
    assert g.values()["final_answer"] == case["final_answer_points"]
    assert check.judge_points == judged["final_answer"] and check.disagrees is case["disagrees"]
    own = sum({**FULL, **judged}.values())
    assert g.total == own - judged["final_answer"] + case["final_answer_points"]
    assert g.judge_total == own
    # The judge's other criteria stand as given.
    assert g.values()["execution"] == judged["execution"]
    # Asked of the judge alone, its own points stand and the disagreement is still recorded.
    alone = reconcile(_grade(judged, _evidence(case["answer_check"])), RUBRIC, 10, "judge")
    assert alone.values()["final_answer"] == judged["final_answer"] and alone.total == own
    assert alone.judge_total is None and alone.checks[0].disagrees is case["disagrees"]


@pytest.mark.parametrize("case", CASES["undecided"], ids=[c["phenomenon"] for c in CASES["undecided"]])
def test_an_undecided_verdict_leaves_the_judges_points(case: dict[str, Any]) -> None:
    judged = {k: float(v) for k, v in case["judge"].items()}
    g = reconcile(_grade(judged, _evidence(case["answer_check"])), RUBRIC, 10)
    (check,) = g.checks
    assert not check.decisive and check.used == "judge" and not check.disagrees
    assert g.values()["final_answer"] == judged["final_answer"]
    assert g.total == sum({**FULL, **judged}.values()) and g.judge_total is None


@pytest.mark.parametrize("case", CASES["steps"], ids=[c["phenomenon"] for c in CASES["steps"]])
def test_full_execution_points_despite_an_invalid_step_disagree(case: dict[str, Any]) -> None:
    g = reconcile(_grade({"execution": float(case["execution"])},
                         _evidence("correct", case["invalid_step"], flow=True)), RUBRIC, 10)
    (step,) = [c for c in g.checks if c.kind == "steps"]
    assert step.disagrees is case["disagrees"] and step.used == "judge"
    assert g.values()["execution"] == case["execution"]  # the judge's execution points are never replaced


def test_without_a_flow_analysis_there_is_no_step_check() -> None:
    g = reconcile(_grade({}, _evidence("correct")), RUBRIC, 10)
    assert [c.kind for c in g.checks] == ["final_answer"]


def test_the_points_scale_with_the_question() -> None:
    # A 20-point question: the final-answer criterion is worth 2 points, all of them for a correct answer.
    scores = [UnitScore(unit=c, value=0.0, max=2 * m) for c, m in FULL.items()]
    g = settle(_ref(), "judge:x", scores, 20.0, expected=5, evidence=_evidence("correct"))
    out = reconcile(g, RUBRIC, 20)
    assert out.values()["final_answer"] == 2.0 and out.total == 2.0 and out.checks[0].disagrees


def test_human_grades_and_ungraded_judgements_keep_their_points() -> None:
    human = _grade({"final_answer": 1.0}, _evidence("incorrect")).model_copy(update={"grader": "human:ann"})
    assert reconcile(human, RUBRIC, 10) == human
    broken = settle(_ref(), "judge:x", [], 10.0, expected=5, error="bad reply", evidence=_evidence("incorrect"))
    out = reconcile(broken, RUBRIC, 10)
    assert out.status == "ungraded" and out.total is None and out.checks[0].judge_points is None


def _graded(n_disagree: int, n_agree: int) -> list[Judgement]:
    wrong = [_grade({"final_answer": 1.0}, _evidence("incorrect"), i) for i in range(n_disagree)]
    right = [_grade({"final_answer": 0.0}, _evidence("incorrect"), 100 + i) for i in range(n_agree)]
    undecided = [_grade({"final_answer": 1.0}, _evidence("unparseable"), 200)]
    return [reconcile(g, RUBRIC, 10) for g in [*wrong, *right, *undecided]]


@pytest.mark.parametrize(("disagree", "agree", "unreliable"), [(1, 4, False), (2, 8, False), (2, 7, True),
                                                                (4, 0, True), (0, 5, False)])
def test_a_judge_over_a_fifth_of_decisive_answers_is_unreliable(disagree: int, agree: int, unreliable: bool) -> None:
    rel = judge_reliability(_graded(disagree, agree))
    assert (rel.decisive, rel.disagreements, rel.undecided) == (disagree + agree, disagree, 1)
    assert rel.unreliable is unreliable and rel.threshold == UNRELIABLE_SHARE
    assert len(rel.listed) == disagree and all(d.kind == "final_answer" for d in rel.listed)
    assert rel.mark().startswith("UNRELIABLE JUDGE" if unreliable else "judge vs checker")
    assert f"{disagree} of {disagree + agree}" in rel.mark()
