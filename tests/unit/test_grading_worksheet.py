"""Human worksheets (export, fill, import), Tables 6/7 from human grades, judge-vs-human agreement."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.grading.agreement_report import agreement_report
from mathlens.analyze.grading.grades import HUMAN_GRADES, grade_run
from mathlens.analyze.grading.judge import JudgeOptions
from mathlens.analyze.grading.rubric import builtin_rubric
from mathlens.analyze.grading.tables import Table7Row, compare_with_cohort, exam_scores, table7
from mathlens.analyze.grading.worksheet import export_worksheet, import_worksheets
from mathlens.errors import UserError
from mathlens.items.schema import Cohort
from mathlens.runs.plan import load_exams
from support import grading_run as helpers

make_run = helpers.make_run


def _fill(src: Path, dst: Path, points: dict[tuple[str, str], float], grader: str = "") -> None:
    """Copy a worksheet, writing `points[(question_id, criterion)]` (full marks where absent)."""
    with src.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["points"] = str(points.get((row["question_id"], row["criterion"]), float(row["max_points"])))
        row["grader"] = grader
    with dst.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_round_trip(tmp_path: Path) -> None:
    store = make_run(tmp_path)
    rubric = builtin_rubric()
    sheet = tmp_path / "sheet.csv"
    assert export_worksheet(store, rubric, sheet) == 4 * 5  # 4 records x 5 criteria
    with sheet.open(encoding="utf-8") as fh:
        first = next(csv.DictReader(fh))
    assert first["points"] == "" and first["max_points"] == "3" and "ln(e)" in first["question"]
    filled = tmp_path / "ada.csv"
    _fill(sheet, filled, {("q1", "execution"): 2.5})
    result = import_worksheets(store, rubric, [filled])
    q1 = next(g for g in result.grades if g.record.configuration == "baseline" and g.record.question_id == "q1")
    assert q1.grader == "human:ada" and q1.status == "graded"
    assert q1.total == pytest.approx(3 + 2.5 + 1 + 1 + 1)
    assert {c.unit: c.value for c in q1.scores}["execution"] == 2.5
    stored = HUMAN_GRADES.read(store.root)
    assert stored is not None and stored.summary.grader_kind == "human" and stored.summary.graders == ["human:ada"]
    assert stored.envelope.entries == 4 and stored.options == {"worksheets": [str(filled)]}
    assert list(HUMAN_GRADES.entries(store.root)) == result.grades


def test_blank_and_invalid_points(tmp_path: Path) -> None:
    store = make_run(tmp_path)
    rubric = builtin_rubric()
    sheet = tmp_path / "sheet.csv"
    export_worksheet(store, rubric, sheet)
    with pytest.raises(UserError, match="the worksheets hold no points"):
        import_worksheets(store, rubric, [sheet])
    bad = tmp_path / "bad.csv"
    _fill(sheet, bad, {("q1", "method"): 4})  # method is worth 3 on a 10-point question
    with pytest.raises(UserError, match=r"bad.csv:\d+: 4 points is outside 0..3"):
        import_worksheets(store, rubric, [bad])
    partial = tmp_path / "partial.csv"
    _fill(sheet, partial, {})
    text = partial.read_text(encoding="utf-8").splitlines()
    header, rows = text[0], text[1:]
    cols = header.split(",")
    kept = [r for r in csv.DictReader([header, *rows]) if r["criterion"] != "clarity"]
    with partial.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(kept)
    grades = import_worksheets(store, rubric, [partial]).grades
    assert all(g.status == "ungraded" and g.total is None and "1 criteria left blank" in g.error for g in grades)


def test_two_graders_merge_and_replace(tmp_path: Path) -> None:
    store = make_run(tmp_path)
    rubric = builtin_rubric()
    sheet = tmp_path / "sheet.csv"
    export_worksheet(store, rubric, sheet)
    _fill(sheet, tmp_path / "a.csv", {}, grader="ann")
    _fill(sheet, tmp_path / "b.csv", {("q2", "execution"): 4}, grader="bob")
    import_worksheets(store, rubric, [tmp_path / "a.csv", tmp_path / "b.csv"])
    _fill(sheet, tmp_path / "b2.csv", {("q2", "execution"): 6}, grader="bob")
    merged = import_worksheets(store, rubric, [tmp_path / "b2.csv"]).grades
    assert {g.grader for g in merged} == {"human:ann", "human:bob"}
    bob_q2 = [g for g in merged if g.grader == "human:bob" and g.record.question_id == "q2"]
    assert len(bob_q2) == 2
    assert all({c.unit: c.value for c in g.scores}["execution"] == 6 for g in bob_q2)


def test_tables_from_human_grades(tmp_path: Path) -> None:
    store = make_run(tmp_path)
    rubric = builtin_rubric()
    sheet = tmp_path / "sheet.csv"
    export_worksheet(store, rubric, sheet)
    _fill(sheet, tmp_path / "h.csv", {("q1", "final_answer"): 0, ("q1", "execution"): 2})
    grades = import_worksheets(store, rubric, [tmp_path / "h.csv"]).grades
    rows = exam_scores(grades, load_exams(store.manifest()))
    # each configuration: q1 = 3 + 2 + 0 + 1 + 1 = 7 of 10, q2 = 20 of 20 -> 27/30 = 90 %
    assert [(r.configuration, r.score, r.total) for r in rows] == [("baseline", 27, 30), ("rag", 27, 30)]
    assert rows[0].percent == pytest.approx(90.0)
    t7 = table7(rows)
    assert t7[0] == Table7Row(exam_id="calc1-e1", exam="Calculus I Exam 1", configuration="student average",
                              percent=80.0, kind="class")
    assert [(r.configuration, r.percent) for r in t7[1:]] == [("baseline", pytest.approx(90.0)),
                                                              ("rag", pytest.approx(90.0))]


def test_cohort_comparison_is_descriptive_without_student_scores() -> None:
    c = compare_with_cohort(70.0, Cohort(class_average=88.8, size=48))
    assert c.kind == "descriptive" and c.difference == pytest.approx(-18.8)
    assert c.percentile is None and c.z_score is None
    assert compare_with_cohort(70.0, None).kind == "none"


def test_judge_against_humans(tmp_path: Path, mock_model: Any) -> None:
    store = make_run(tmp_path)
    rubric = builtin_rubric()
    judge = mock_model(responses=[json.dumps({k: {"points": 1, "rationale": "r"} for k in
                                              ("method", "execution", "final_answer", "notation", "clarity")})])
    # the judge alone (its own final-answer points): this compares a judge with a person
    judge_grades = asyncio.run(grade_run(store, judge, rubric, JudgeOptions(runs=2), final_answer="judge"))
    sheet = tmp_path / "sheet.csv"
    export_worksheet(store, rubric, sheet)
    ones = {(q, c): 1.0 for q in ("q1", "q2") for c in ("method", "execution", "final_answer", "notation", "clarity")}
    same = dict(ones)
    same[("q1", "method")] = 3.0
    _fill(sheet, tmp_path / "h.csv", same, grader="h")
    humans = import_worksheets(store, rubric, [tmp_path / "h.csv"]).grades
    report = agreement_report(judge_grades.grades + humans, rubric, n_resamples=200)
    pairs = {p.scope: p for p in report.pairs}
    assert [(p.a, p.b) for p in report.pairs] == [("judge:mock/scripted", "human:h")] * 6
    assert [p.scope for p in report.pairs] == [*(c.id for c in rubric.criteria), "overall"]
    assert all((p.kappa_weights, p.alpha_level, p.percent) == ("quadratic", "interval", None) for p in report.pairs)
    assert set(report.graders) == {"judge:mock/scripted", "judge:mock/scripted#run1", "human:h"}
    # execution: every unit 1 vs 1 -> MAE 0; method: q1 differs by 2 on both configurations, q2 agrees
    execution, method = pairs["execution"].mae, pairs["method"].mae
    assert execution is not None and execution.estimate == 0 and pairs["execution"].n == 4
    assert method is not None and method.estimate == pytest.approx(1.0)
    # the judge is constant on method, so kappa is 0 by construction (observed = expected disagreement)
    assert pairs["method"].kappa.estimate == pytest.approx(0.0)
    # self-agreement: two identical judge runs; constant ratings leave alpha undefined, identical share 1
    selves = {s.scope: s for s in report.self_agreement}
    assert selves["overall"].identical_share == 1.0 and selves["overall"].runs == 2
    assert selves["overall"].alpha.status == "undefined" and selves["overall"].alpha_level == "interval"
