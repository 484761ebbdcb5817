"""What each analysis reads of a record with a reasoning trace, and the bounds on long traces.

- answers: the final answer comes from the visible answer only; a trace the cap cut before any
  answer is ``no_response`` with a reason, even when the trace itself ends with the right answer;
- flow: the trace is what is analysed, flagged as such, and a cut trace is flagged too;
- bounds: a trace longer than the analysis reads lists every bound it hit in `FlowResult.capped`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from mathlens.analyze.flow.analyzer import analyze_record
from mathlens.analyze.flow.solution import FlowConfig, analyze_solution
from mathlens.analyze.grading.analyzer import TRACE_CUT_REASON, check_record
from mathlens.analyze.grading.compliance import FormatRules
from mathlens.analyze.grading.equivalence import EquivalenceConfig
from mathlens.analyze.verify.steps import VerifyConfig
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import RunRecord

QUESTION = Question(id="q1", text="What is 6 times 7?", answers=["42"])
RULES = FormatRules(latex=False, markup=False)


def _record(response: str, reasoning: str | None, finish: str = "stop") -> RunRecord:
    return RunRecord(key="k1", model="m", configuration="baseline", exam_id="e", question_id="q1",
                     messages=[Message(role="user", content=QUESTION.text)], config=GenerateConfig(),
                     request_hash="h", content_hash="c", response=response, reasoning=reasoning,
                     finish_reason=finish, created_at=datetime(2026, 1, 1, tzinfo=UTC))


def test_answer_comes_from_the_visible_part_not_the_trace() -> None:
    rec = _record("Final answer: 42", "6 * 7 = 41?\nFinal answer: 41")
    entry = check_record(rec, QUESTION, RULES, EquivalenceConfig())
    assert entry.status == "correct" and entry.trace and not entry.trace_truncated
    wrong = _record("Final answer: 41", "6 * 7 = 42.\nFinal answer: 42")
    assert check_record(wrong, QUESTION, RULES, EquivalenceConfig()).status == "incorrect"


def test_trace_cut_by_the_cap_is_no_answer_with_a_reason() -> None:
    rec = _record("", "6 * 7 = 42.\nFinal answer: 42", finish="length")
    entry = check_record(rec, QUESTION, RULES, EquivalenceConfig())
    assert entry.status == "no_response" and entry.verdict is None
    assert entry.trace_truncated and entry.truncated and entry.reason == TRACE_CUT_REASON


def test_empty_answer_after_a_closed_trace_is_no_answer_but_not_a_cut_trace() -> None:
    entry = check_record(_record("", "6 * 7 = 42."), QUESTION, RULES, EquivalenceConfig())
    assert entry.status == "no_response" and not entry.trace_truncated
    assert "empty" in entry.reason


def test_flow_reads_the_trace_and_flags_a_cut_one() -> None:
    rec = _record("", "Step 1: 6 * 7 = 41.\n\nStep 2: so the product is 41.", finish="length")
    entry = analyze_record(rec, QUESTION.text)
    assert entry.status == "ok" and entry.trace and entry.trace_truncated
    assert entry.result is not None and "6 * 7 = 41" in entry.result.steps[0].text
    assert entry.result.metrics.invalid_steps >= 1
    plain = analyze_record(_record("Step 1: 6 * 7 = 42.", None), QUESTION.text)
    assert not plain.trace and not plain.trace_truncated and plain.result is not None
    assert plain.result.capped == []


def test_every_bound_hit_on_a_long_trace_is_recorded() -> None:
    block = "Step {i}: {i} + {i} = {s}.\n\nWait, let me re-check: {i} * 2 = {s}.\n\n"
    text = "".join(block.format(i=i, s=2 * i) for i in range(400))
    config = FlowConfig(max_text_chars=len(text) - 100, verify=VerifyConfig(max_spans=20))
    result = analyze_solution(text, None, config)
    caps = {c.limit: c for c in result.capped}
    assert set(caps) == {"text_chars", "steps", "math_snippets"}
    assert caps["text_chars"].total == len(text) and caps["text_chars"].analysed == len(text) - 100
    assert caps["steps"].analysed == len(result.steps)
    skipped = sum(s.check_status == "skipped" for s in result.steps)
    assert skipped > 0 and caps["math_snippets"].analysed == len(result.steps) - skipped


def test_time_budget_is_recorded_as_its_own_bound() -> None:
    text = "".join(f"Step {i}: {i} + 1 = {i + 1}.\n\n" for i in range(30))
    result = analyze_solution(text, None, FlowConfig(verify=VerifyConfig(solution_budget_s=0.0)))
    assert [c.limit for c in result.capped] == ["time_budget"]
    assert result.capped[0].analysed == 0 and result.capped[0].total == len(result.steps)


def test_rubric_judge_sees_the_visible_answer_only() -> None:
    from mathlens.analyze.grading.judge import JudgeOptions, evidence_for, judge_messages
    from mathlens.analyze.grading.rubric import builtin_rubric

    rec = _record("6 * 7 = 42.\nFinal answer: 42", "SCRATCH: 6 * 7 = 41? no.\nFinal answer: 41")
    evidence = evidence_for(rec, QUESTION, None)
    sent = "\n".join(m.content for m in judge_messages(rec, QUESTION, builtin_rubric(), JudgeOptions(),
                                                       evidence))
    assert "Final answer: 42" in sent and "SCRATCH" not in sent and "41" not in sent
    assert evidence.final_answer is not None and "42" in evidence.final_answer


def test_the_report_says_which_bounds_cut_an_analysis() -> None:
    from mathlens.analyze.flow.models import FlowRecord
    from mathlens.report.flowdata import read_flow
    from mathlens.runs.documents import RecordRef

    text = "".join(f"Step {i}: {i} + 1 = {i + 1}.\n\n" for i in range(30))
    result = analyze_solution(text, None, FlowConfig(verify=VerifyConfig(solution_budget_s=0.0)))
    ref = RecordRef.of(_record("Final answer: 31", text))
    shown = dict(read_flow(FlowRecord(record=ref, status="ok", result=result)).metrics)
    assert shown["analysed in part"] == f"steps checked: 0 of {len(result.steps)} (limit 0 s of checks)"
    whole = analyze_solution("Step 1: 2 + 2 = 4.", None, FlowConfig())
    assert "analysed in part" not in dict(read_flow(FlowRecord(record=ref, status="ok", result=whole)).metrics)
