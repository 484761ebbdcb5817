"""Judge grading with scripted models: validation, `ungraded` handling, evidence, caching, tables."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.grading.grades import GRADES, grade_run
from mathlens.analyze.grading.judge import Evidence, JudgeOptions, validate_points, verdict_schema
from mathlens.analyze.grading.rubric import builtin_rubric
from mathlens.analyze.grading.tables import exam_scores
from mathlens.runs.plan import load_exams
from support import grading_run as helpers

make_run = helpers.make_run


def verdict(**points: float) -> str:
    base = {"method": 3, "execution": 4, "final_answer": 1, "notation": 1, "clarity": 1}
    base.update(points)
    return json.dumps({k: {"points": v, "rationale": f"{k} ok"} for k, v in base.items()})


def test_valid_verdicts_are_graded_and_summed(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    judge = mock_model(responses=[verdict(execution=2.5)])
    result = asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions()))
    assert [g.status for g in result.grades] == ["graded"] * 4
    first = result.grades[0]
    assert first.total == pytest.approx(3 + 2.5 + 1 + 1 + 1)
    assert first.max_total == 10 and [s.max for s in first.scores] == [3, 4, 1, 1, 1]
    assert [s.unit for s in first.scores] == ["method", "execution", "final_answer", "notation", "clarity"]
    assert first.scores[1].rationale == "execution ok" and first.scores[1].value == 2.5
    assert first.record.key == next(store.records()).key and first.record.configuration == "baseline"
    assert (result.summary.graded, result.summary.ungraded) == (4, 0)
    assert result.summary.judge is not None and result.summary.judge.model.spec == "mock/scripted"
    assert not GRADES.exists(store.root)  # grade_run writes nothing; the `grades` analyzer writes GRADES


def test_out_of_bounds_points_are_ungraded_never_zero(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    # 5 execution points on a 10-point question (max 4), on both the first reply and the repair
    judge = mock_model(responses=[verdict(execution=5)])
    result = asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions(), limit=1))
    g = result.grades[0]
    assert g.status == "ungraded" and g.total is None and g.scores == []
    assert "execution" in g.error and len(g.raw) == 2
    # q2 is worth 20 points: the same reply is within its bounds there
    q2 = asyncio.run(grade_run(store, mock_model(responses=[verdict(execution=5)]), builtin_rubric(),
                               JudgeOptions(), limit=2)).grades[1]
    # the judge's 11 points, with the checker's 2 (not the judge's 1) for q2's correct final answer
    assert q2.status == "graded" and q2.judge_total == pytest.approx(11) and q2.total == pytest.approx(12)


def test_repair_retry_can_rescue_a_verdict(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    judge = mock_model(responses=["I think it deserves full marks.", verdict()])
    g = asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions(), limit=1)).grades[0]
    assert g.status == "graded" and g.total == pytest.approx(10) and len(g.raw) == 2


def test_model_failures_are_ungraded(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    judge = mock_model(errors=["permanent"])
    g = asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions(), limit=1)).grades[0]
    assert g.status == "ungraded" and g.error.startswith("error") and g.total is None


def test_validate_points_checks_bounds_itself() -> None:
    rubric = builtin_rubric()
    loose = verdict_schema(rubric, 20)  # built for a 20-point question: bounds twice as wide
    value = loose.model_validate_json(verdict(method=6))
    grades, problem = validate_points(value, rubric, 10)
    assert grades == [] and "method" in problem and "0..3" in problem
    ok, none = validate_points(value, rubric, 20)
    assert none == "" and sum(c.value or 0 for c in ok) == pytest.approx(13)


def test_evidence_is_shown_and_recorded(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    judge = mock_model(responses=[verdict()])
    g = asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions(), limit=1)).grades[0]
    assert g.evidence == Evidence(final_answer="1", answer_check="correct", reference="1", flow_checked=False)
    sent = judge.provider.requests[0][0][-1].content
    assert "Automatic checks" in sent and "Final answer read from the response: '1'" in sent
    assert "checked against the reference: correct" in sent
    assert "Reference answer: 1" in sent and "up to 3 points" in sent
    plain = mock_model(responses=[verdict()])
    g = asyncio.run(grade_run(store, plain, builtin_rubric(), JudgeOptions(with_evidence=False), limit=1)).grades[0]
    assert "Automatic checks" not in plain.provider.requests[0][0][-1].content
    assert g.evidence is not None and g.evidence.answer_check == "correct"  # recorded for reconciliation


def test_evidence_states_a_missing_answer_in_words() -> None:
    # the judge reads sentences: a verdict name such as ``no_answer`` is written out
    lines = Evidence(final_answer=None, answer_check="no_answer", reference="7").describe()
    assert lines[0] == ("- Final answer read from the response: no final answer found; "
                        "checked against the reference: no answer (reference: 7).")
    assert not any("_" in line for line in lines)


def test_judge_requests_are_cached(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    judge = mock_model(responses=[verdict()], cache=True)
    asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions()))
    asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions()))
    assert judge.stats.calls == 4 and judge.stats.cache_hits == 4


def test_table6_with_cohort_and_ungraded(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    # q1 replies are out of bounds for 10 points (ungraded); q2 (20 points) earns 11 in baseline
    # (the judge's own points: this test is about the cohort comparison)
    judge = mock_model(responses=[verdict(execution=5)])
    result = asyncio.run(grade_run(store, judge, builtin_rubric(), JudgeOptions(), final_answer="judge"))
    rows = {r.configuration: r for r in exam_scores(result.grades, load_exams(store.manifest()))}
    base = rows["baseline"]
    assert (base.score, base.total, base.ungraded, base.complete) == (11, 20, 1, False)
    assert base.percent == pytest.approx(55.0)
    # per-student scores 60, 70, 90, 100: none at or below 55 -> percentile 0
    assert base.cohort.kind == "per_student" and base.cohort.percentile == 0
    sd = (sum((s - 80) ** 2 for s in (60, 70, 90, 100)) / 3) ** 0.5
    assert base.cohort.z_score == pytest.approx((55 - 80) / sd)


def test_judge_options_ask_the_core_with_their_own_sampling() -> None:
    req = JudgeOptions(max_tokens=400, temperature=0.3, seed=7, runs=3, with_evidence=False).request()
    assert (req.max_tokens, req.temperature, req.seed, req.runs) == (400, 0.3, 7, 3)
    assert (req.per_unit, req.repeat_penalty, req.missing) == (False, 1.0, "criteria unscored")
    assert req.config(judge_run=2).seed == 9
