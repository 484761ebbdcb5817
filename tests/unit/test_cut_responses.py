"""One story for a response the token cap cut: the answers analysis, the quality flags and the
judge's evidence agree on whether it states a final answer, and the report says why when it does not.

A cut response states an answer only where it marks one the cut did not reach (a closed box, an
answer line or "the answer is" followed by more text or closed by a full stop or bracket). Every
other reading (a closing "so ..." sentence, the last equation, the last number) is where the work
stopped, and the three verdicts say "no answer" together.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mathlens.analyze.grading.analyzer import check_record
from mathlens.analyze.grading.compliance import FormatRules
from mathlens.analyze.grading.equivalence import EquivalenceConfig
from mathlens.analyze.grading.judge import evidence_for
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import RunRecord

QUESTION = Question(id="q1", text="A shop sells 4 boxes of 12 pens and 3 loose pens. How many pens?", answers=["51"])
RULES = FormatRules(latex=False, markup=False)

#: (name, response, finish reason, status of the answers analysis)
CASES = [
    ("cut after an intermediate 'so' sentence",
     "Each box holds 12 pens, so 4 boxes hold 48 pens.\nNext we add the loose pens, which gives", "length",
     "no_answer"),
    ("the same text, not cut: its closing sentence is read",
     "Each box holds 12 pens, so 4 boxes hold 48 pens.", "stop", "incorrect"),
    ("cut after a last equation in code",
     "```python\nboxes = 4\nper_box = 12\npens = boxes * per_box + loose", "length", "no_answer"),
    ("cut inside the answer line", "4 * 12 = 48 and 48 + 3 = 51.\nFinal answer: 5", "length", "no_answer"),
    ("cut after a closed box", "4 * 12 + 3 = 51, so there are $\\boxed{51}$ pens. To check, 51 - 3", "length",
     "correct"),
    ("cut after a finished answer line, in its check",
     "4 * 12 = 48 and 48 + 3 = 51.\nFinal answer: 51\nCheck: 51 - 3 = 48 and 48 / 4", "length", "correct"),
    ("cut after an answer line closed by a full stop", "4 * 12 = 48, 48 + 3 = 51.\nThe answer is 51.", "length",
     "correct"),
]


def _record(response: str, finish: str) -> RunRecord:
    return RunRecord(key="k1", model="m", configuration="baseline", exam_id="e", question_id="q1",
                     messages=[Message(role="user", content=QUESTION.text)], config=GenerateConfig(),
                     request_hash="h", content_hash="c", response=response, finish_reason=finish,
                     created_at=datetime(2026, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(("name", "response", "finish", "status"), CASES, ids=[c[0] for c in CASES])
def test_the_checks_tell_one_story(name: str, response: str, finish: str, status: str) -> None:
    rec = _record(response, finish)
    entry = check_record(rec, QUESTION, RULES, EquivalenceConfig())
    assert entry.status == status, entry
    evidence = evidence_for(rec, QUESTION, None)
    assert entry.quality is not None
    if finish == "length":
        said_none = {entry.status == "no_answer", entry.quality.no_final_answer, evidence.answer_check == "no_answer"}
        assert len(said_none) == 1, (entry, evidence)
    if status == "no_answer":
        assert entry.verdict is not None and entry.verdict.predicted is None
        assert "token cap" in entry.reason and evidence.final_answer is None
    else:
        assert entry.reason == "" and evidence.final_answer is not None


def test_a_cut_response_counts_as_a_wrong_answer_in_accuracy() -> None:
    entry = check_record(_record(CASES[0][1], "length"), QUESTION, RULES, EquivalenceConfig())
    assert entry.accuracy == 0.0


def test_the_check_command_takes_the_cut_too() -> None:
    import json

    from typer.testing import CliRunner

    from mathlens.cli.main import app

    text = "Each box holds 12 pens, so 4 boxes hold 48 pens.\nNext we add the loose pens, which gives"
    runner = CliRunner()
    cut = runner.invoke(app, ["check", text, "-r", "51", "--cut", "--json"])
    whole = runner.invoke(app, ["check", text, "-r", "51", "--json"])
    assert cut.exit_code == 0 and whole.exit_code == 0, (cut.output, whole.output)
    assert json.loads(cut.output)["status"] == "no_answer"
    assert json.loads(whole.output)["status"] == "incorrect"
    said = runner.invoke(app, ["check", text, "-r", "51", "--cut"]).output
    assert "answer none stated" in said and "token cap" in said


def test_a_wrong_part_and_a_cut_last_part_show_no_whole_answer() -> None:
    """Part (a) is wrong and the cap cut part (b)'s work: the whole verdict is incorrect, part (b)
    states no answer, and the whole reading (where the work stopped) is not shown as an answer."""
    from mathlens.analyze.grading.equivalence import check_answer

    q = Question.model_validate({"id": "k", "text": "Power series.", "parts": [
        {"label": "a", "text": "radius?", "answer": "3"}, {"label": "b", "text": "interval?", "answer": "[-1, 5)"}]})
    response = "(a) The radius is R = 4.\n\n(b) At x = -1 the terms are\n\\[ a_n = \\frac{(-3)^n}{n \\cdot 3^n} = 7"
    cut = check_answer(response, q, cut=True)
    assert cut.status == "incorrect" and cut.predicted is None
    assert [p.status for p in cut.parts] == ["incorrect", "no_answer"]
    whole = check_answer(response, q)  # the same text, not cut: its last reading stands
    assert whole.predicted is not None and whole.parts[1].status != "no_answer"


PARTS = Question.model_validate({"id": "q1", "text": "A power series.", "parts": [
    {"label": "a", "text": "Its radius?", "answer": "3"}, {"label": "b", "text": "Its centre?", "answer": "2"},
    {"label": "c", "text": "Its interval?", "answer": "[-1, 5)"}]})

#: (name, response; the token cap cut each in part (c)), the whole verdict, the grade's finding,
#: and the parts the judge is shown as answered
PART_CASES = [
    ("earlier parts right, the last one cut",
     "(a) The radius is R = 3.\n\n(b) The centre is x = 2.\n\n(c) At x = -1 the terms are\n\\[ a_n = 7", "no_answer",
     "incomplete", ["a", "b"]),
    ("an earlier part wrong, the last one cut",
     "(a) The radius is R = 4.\n\n(b) The centre is x = 2.\n\n(c) At x = -1 the terms are\n\\[ a_n = 7", "incorrect",
     "incorrect", ["a", "b"]),
]


@pytest.mark.parametrize(("name", "response", "whole", "finding", "answered"), PART_CASES,
                         ids=[c[0] for c in PART_CASES])
def test_a_cut_response_with_parts_is_shown_to_the_judge_part_by_part(
        name: str, response: str, whole: str, finding: str, answered: list[str]) -> None:
    """The judge's evidence holds the verdict of every part, as the answers analysis has it: the
    parts answered before the cut are not hidden behind "no final answer found"."""
    from mathlens.analyze.grading.reconcile import DECISIVE, answer_finding

    rec = _record(response, "length")
    entry = check_record(rec, PARTS, RULES, EquivalenceConfig())
    evidence = evidence_for(rec, PARTS, None)
    assert entry.status == whole and evidence.answer_check == whole
    assert entry.verdict is not None
    assert [(p.label, p.answer_check) for p in evidence.parts] == [(p.label, p.status) for p in entry.verdict.parts]
    assert [p.label for p in evidence.answered_parts] == answered
    assert evidence.parts[-1].answer_check == "no_answer" and "token cap" in evidence.parts[-1].note
    said = "\n".join(evidence.describe())
    assert "no final answer" not in said and "(c) none" in said and "token cap" in said
    assert answer_finding(evidence) == finding and finding in DECISIVE
    # shown to a reader (compare's changed items) as the parts, not the whole reading they came from
    stated = entry.verdict.stated
    assert stated is not None and stated.startswith("(a) ") and stated.endswith("; (c) none")
    assert "x = 2" in stated and "a_n" not in stated


def test_a_cut_response_with_no_part_answered_states_no_final_answer() -> None:
    from mathlens.analyze.grading.reconcile import answer_finding

    rec = _record("(a) We start from the ratio test: the terms are\n\\[ a_n = 7", "length")
    evidence = evidence_for(rec, PARTS, None)
    assert evidence.answered_parts == [] and answer_finding(evidence) == "no final answer"
