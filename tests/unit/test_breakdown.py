"""The breakdown analysis end to end: a real run of a scripted `mock/` model (`mathlens run --runs
2`), `mathlens analyze`, then the `BREAKDOWN` document checked against values worked out by hand
from the scripted responses and the exam file, and the report section showing them.

Two scripted solutions alternate. A adds correctly and answers 5. B makes one addition error
(2 + 3 = 6, an invalid step labelled evaluation and arithmetic, about area) and then doubles
correctly (a valid step labelled evaluation and differentiation, about rate of change), answering
12. Which question received which solution depends on scheduling, so the expectations are
computed per record from its response."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.breakdown.models import BREAKDOWN, GroupScore, StepShare
from mathlens.analyze.flow.models import FLOW
from mathlens.report import make_report
from mathlens.runs.store import RunStore
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"



RIGHT = "1. The area is the sum of the two strips: 2 + 3 = 5.\nFinal answer: 5"
SLIP = ("1. The area is the sum of the two strips: 2 + 3 = 6.\n"
        "2. The rate of change doubles it: 6 * 2 = 12.\nFinal answer: 12")
#: the final answer each scripted solution gives
FINAL = {RIGHT: "5", SLIP: "12"}
#: step verdicts, operations and concepts of each scripted solution (steps with something checked)
STEPS = {
    RIGHT: [("valid", {"evaluation", "arithmetic"}, {"area and volume"})],
    SLIP: [("invalid", {"evaluation", "arithmetic"}, {"area and volume"}),
           ("valid", {"evaluation", "differentiation"}, {"rate of change"})],
}
COHORT = {"class_average": 70.0, "std": 10.0, "size": 40}
EXAM: dict[str, Any] = {
    "id": "bd-e1", "name": "Breakdown exam", "course": "Calculus I", "cohort": COHORT,
    "questions": [
        {"id": "q1", "text": "Add 2 and 3.", "points": 10, "topics": ["arithmetic", "area"], "answers": ["5"],
         "class_average": 80.0, "class_std": 10.0},
        {"id": "q2", "text": "What is 6 doubled?", "points": 20, "topics": ["arithmetic"], "answers": ["12"],
         "class_average": 50.0},
        {"id": "q3", "text": "Explain why 2 + 3 equals 3 + 2.", "points": 10, "topics": ["proof"]},
        {"id": "q4", "text": "A farmer has 2 cows and buys 3 more. How many cows does the farmer have?",
         "points": 10, "answers": ["5"], "metadata": {"type": "word_problem"}},
    ],
}
QUESTIONS = {q["id"]: q for q in EXAM["questions"]}
REPEATS = 2


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("breakdown")
    exam = base / "exam.yaml"
    exam.write_text(yaml.safe_dump(EXAM, allow_unicode=True), encoding="utf-8")
    out = base / "run"
    fx.cli("run", str(exam), "--model", "mock/student", "-M", "responses=" + json.dumps([RIGHT, SLIP]),
           "--runs", str(REPEATS), "--out", str(out), "--quiet", cache=base / ".cache")
    summary = fx.cli("analyze", str(out))
    assert summary["analyzers"]["breakdown"]["status"] == "ok"
    return out


def _responses(run: Path) -> dict[str, list[str]]:
    """Question id -> the scripted solutions it received (one per repeat)."""
    out: dict[str, list[str]] = {}
    for rec in RunStore(run).records():
        assert rec.response in FINAL
        out.setdefault(rec.question_id, []).append(rec.response)
    return out


def _correct(qid: str, response: str) -> bool:
    return FINAL[response] in QUESTIONS[qid].get("answers", [])


def _score(qid: str, responses: list[str]) -> float | None:
    """Final-answer score in percent of the question's points, averaged over repeats."""
    if not QUESTIONS[qid].get("answers"):
        return None
    return 100 * sum(_correct(qid, r) for r in responses) / len(responses)


def test_the_scripted_steps_are_labelled_as_assumed(run: Path) -> None:
    """The flow analysis (what the breakdown reads) sees the steps this file's expectations assume."""
    for entry in FLOW.entries(run):
        assert entry.result is not None
        rec = next(r for r in RunStore(run).records() if r.key == entry.record.key)
        checked = [(s.verdict, set(s.operations), set(s.concepts)) for s in entry.result.steps
                   if s.verdict in ("valid", "invalid")]
        assert checked == STEPS[rec.response or ""], rec.response


def _share(rows: list[StepShare], label: str) -> StepShare:
    [row] = [r for r in rows if r.label == label]
    return row


def test_invalid_step_shares_by_operation_and_concept(run: Path) -> None:
    doc = BREAKDOWN.read(run)
    assert doc is not None
    s = doc.summary
    got = [r for rs in _responses(run).values() for r in rs]
    n_right, n_slip = got.count(RIGHT), got.count(SLIP)
    assert n_right + n_slip == len(QUESTIONS) * REPEATS
    assert s.step_source == "symbolic" and s.responses == n_right + n_slip
    expected_ops = {  # label: (invalid, checked, responses)
        "evaluation": (n_slip, n_right + 2 * n_slip, n_right + n_slip),
        "arithmetic": (n_slip, n_right + n_slip, n_right + n_slip),
        "differentiation": (0, n_slip, n_slip),
    }
    expected_concepts = {
        "area and volume": (n_slip, n_right + n_slip, n_right + n_slip),
        "rate of change": (0, n_slip, n_slip),
    }
    for rows, expected in ((s.operations, expected_ops), (s.concepts, expected_concepts)):
        assert {r.label for r in rows} == set(expected)
        for label, (invalid, checked, responses) in expected.items():
            row = _share(rows, label)
            assert (row.invalid, row.checked, row.responses) == (invalid, checked, responses), label
            assert row.share.estimate == pytest.approx(invalid / checked)
            assert row.share.n == responses and row.share.n_resamples == 2000
            low, est, high = row.share.low, row.share.estimate, row.share.high
            assert low is not None and est is not None and high is not None
            assert low <= est <= high
    # ranked by invalid steps, then share: arithmetic (n_slip of n_right + n_slip) before evaluation
    assert [r.label for r in s.operations] == ["arithmetic", "evaluation", "differentiation"]
    [overall] = s.overall
    assert (overall.label, overall.invalid, overall.checked) == ("all steps", n_slip, n_right + 2 * n_slip)
    # a share mixing wholly invalid and wholly valid responses has an interval strictly inside (0, 1)
    arithmetic = _share(s.operations, "arithmetic").share
    assert arithmetic.status == "ok" and arithmetic.low is not None and arithmetic.high is not None
    assert 0.0 < arithmetic.low < arithmetic.estimate < arithmetic.high < 1.0  # type: ignore[operator]
    # a label never invalid has the degenerate interval [0, 0]
    assert (_share(s.operations, "differentiation").share.low, _share(s.operations, "differentiation").share.high) == (
        0.0, 0.0)


def _group(rows: list[GroupScore], name: str) -> GroupScore:
    [row] = [r for r in rows if r.group == name]
    return row


def test_scores_by_topic_and_type_and_per_question_class_averages(run: Path) -> None:
    doc = BREAKDOWN.read(run)
    assert doc is not None
    s = doc.summary
    got = _responses(run)
    assert s.score_basis == "final answer" and s.has_answers
    correct = {q: sum(_correct(q, r) for r in got[q]) for q in QUESTIONS if QUESTIONS[q].get("answers")}
    score = {q: _score(q, got[q]) for q in QUESTIONS}

    arithmetic = _group(s.topics, "arithmetic")
    assert (arithmetic.questions, arithmetic.responses) == (2, 2 * REPEATS)
    assert (arithmetic.correct, arithmetic.checkable) == (correct["q1"] + correct["q2"], 2 * REPEATS)
    assert arithmetic.accuracy is not None
    assert arithmetic.accuracy.estimate == pytest.approx((correct["q1"] + correct["q2"]) / (2 * REPEATS))
    assert arithmetic.accuracy.n == 2  # resampled by question
    assert arithmetic.score == pytest.approx((10 * score["q1"] + 20 * score["q2"]) / 30)  # type: ignore[operator]
    assert _group(s.topics, "area").score == pytest.approx(score["q1"])
    proof = _group(s.topics, "proof")  # no reference answer: neither accuracy nor a final-answer score
    assert proof.accuracy is None and proof.score is None and proof.checkable == 0
    assert _group(s.topics, "(no topic)").score == pytest.approx(score["q4"])
    assert {r.group for r in s.topics} == {"arithmetic", "area", "proof", "(no topic)"}

    assert {r.group: r.questions for r in s.types} == {"single_answer": 2, "open": 1, "word_problem": 1}
    assert _group(s.types, "word_problem").accuracy.estimate == pytest.approx(correct["q4"] / REPEATS)  # type: ignore[union-attr]

    entries = {e.question_id: e for e in BREAKDOWN.entries(run)}
    assert [e.question_id for e in BREAKDOWN.entries(run)] == ["q1", "q2", "q3", "q4"]  # exam order
    q1, q2, q3 = entries["q1"], entries["q2"], entries["q3"]
    assert q1.score == pytest.approx(score["q1"]) and q1.class_average == 80.0
    assert q1.difference == pytest.approx(score["q1"] - 80.0)  # type: ignore[operator]
    assert q1.z_score == pytest.approx((score["q1"] - 80.0) / 10.0)  # type: ignore[operator]
    assert q2.difference == pytest.approx(score["q2"] - 50.0) and q2.z_score is None  # type: ignore[operator]
    assert q3.class_average is None and q3.difference is None and q3.question_type == "open"
    assert q1.invalid_steps == sum(r == SLIP for r in got["q1"])
    assert q1.checked_steps == sum(len(STEPS[r]) for r in got["q1"])
    assert s.questions_with_class_average == 2

    [exam] = s.exams
    percent = (10 * score["q1"] + 20 * score["q2"] + 10 * score["q4"]) / 40  # type: ignore[operator]
    assert exam.score == pytest.approx(percent) and exam.questions == 4
    assert exam.cohort.kind == "mean_sd" and exam.cohort.class_average == 70.0
    assert exam.cohort.z_score == pytest.approx((percent - 70.0) / 10.0)


def test_rubric_grades_replace_final_answers_as_the_score(run: Path, tmp_path: Path) -> None:
    import shutil

    graded = tmp_path / "graded"
    shutil.copytree(run, graded)
    full = json.dumps({k: {"points": 1, "rationale": "ok"} for k in
                       ("method", "execution", "final_answer", "notation", "clarity")})
    # the judge's own points (this is about the score basis, not the reconciliation with the checker)
    fx.cli("grade", str(graded), "--judge", "mock/judge", "-J", f"responses={json.dumps([full])}",
           "--final-answer", "judge", cache=tmp_path / ".cache")
    fx.cli("analyze", str(graded), "--only", "breakdown")
    doc = BREAKDOWN.read(graded)
    assert doc is not None and doc.summary.score_basis == "rubric"
    entries = {e.question_id: e for e in BREAKDOWN.entries(graded)}
    for qid, q in QUESTIONS.items():  # five points from the judge on every question
        assert entries[qid].score == pytest.approx(100 * 5 / q["points"]), qid
    assert _group(doc.summary.topics, "proof").score == pytest.approx(50.0)  # an open question has a rubric score


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_report_section_shows_top_operations_and_topics(run: Path) -> None:
    doc = BREAKDOWN.read(run)
    assert doc is not None
    html = make_report([run]).html()
    block = html.split('id="sec-breakdown"')[1].split("</section>")[0]
    got = [r for rs in _responses(run).values() for r in rs]
    n_right, n_slip = got.count(RIGHT), got.count(SLIP)
    ops = _text(block.split('id="breakdown-operation"')[1].split("</figure>")[0])
    share = 100 * n_slip / (n_right + n_slip)
    assert f"mock/student · baseline arithmetic {n_slip} {n_right + n_slip} {share:.1f}" in ops
    assert "differentiation" not in ops  # no invalid step: not a failing operation
    assert f"all steps {n_slip} {n_right + 2 * n_slip}" in ops
    concepts = _text(block.split('id="breakdown-concept"')[1].split("</figure>")[0])
    assert "area and volume" in concepts and "rate of change" not in concepts
    topics = _text(block.split('id="breakdown-topic"')[1].split("</figure>")[0])
    arithmetic = _group(doc.summary.topics, "arithmetic")
    assert arithmetic.accuracy is not None and arithmetic.accuracy.estimate is not None
    assert f"arithmetic 2 {2 * REPEATS} {100 * arithmetic.accuracy.estimate:.1f}" in topics
    assert "(no topic)" in topics and "proof" in topics
    assert 'id="breakdown-topics-chart"' in block
    klass = _text(block.split('id="breakdown-class"')[1].split("</figure>")[0])
    q1 = _score("q1", _responses(run)["q1"])
    assert q1 is not None
    assert f"q1 bd-e1 mock/student · baseline {q1:.1f} 80.0 {q1 - 80:.1f} {(q1 - 80) / 10:.2f}" in klass
    assert 'href="#q-bd-e1-q1"' in block
    assert "Breakdown exam" in _text(block.split('id="breakdown-cohort"')[1].split("</figure>")[0])
