"""Judge scoring per item through the judging core's structured-output path, with scripted models."""

from __future__ import annotations

import json
from typing import Any

from mathlens.analyze.adaptivity.judge import JudgeContext, item_messages, judge_cells, judge_item
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.analyze.judging.request import JudgeJob
from mathlens.analyze.judging.units import Target
from mathlens.runs.documents import RecordRef

CTX = JudgeContext(learner="grade 4, low performer", request="What is 3 + 4?",
                   reference="Correct answer: 7", response="Let's count on from 3: 4, 5, 6, 7. So 3 + 4 = 7.")


def verdict(rating: str, rationale: str = "Counts on step by step.") -> str:
    return json.dumps({"rationale": rationale, "rating": rating})


async def test_ok_verdict_becomes_the_item_score(mock_model: Any) -> None:
    model = mock_model(responses=[verdict("yes")])
    score = await judge_item(model, load_rubric().item("Q9"), CTX)
    assert (score.unit, score.status, score.value, score.label, score.rationale) == (
        "Q9", "ok", 1, "yes", "Counts on step by step.")
    assert score.max == 1
    (messages, config, schema), = model.provider.requests
    assert schema is not None and schema["properties"]["rating"]["enum"] == ["no", "yes"]
    # the tutoring judge's request settings: greedy, seed 1234, light repeat penalty, short replies
    assert (config.temperature, config.seed, config.repeat_penalty, config.max_tokens) == (0.0, 1234, 1.1, 160)
    assert "Let's count on from 3" in messages[-1].content and "Rubric question Q9" in messages[-1].content


async def test_reversed_item_yes_means_zero(mock_model: Any) -> None:
    score = await judge_item(mock_model(responses=[verdict("yes")]), load_rubric().item("Q13"), CTX)
    assert (score.status, score.value, score.label) == ("ok", 0, "yes")


async def test_unusable_output_is_unscored_after_one_repair(mock_model: Any) -> None:
    model = mock_model(responses=["I think it is fine.", verdict("maybe")])
    score = await judge_item(model, load_rubric().item("Q2"), CTX)
    assert score.status == "unscored" and score.value is None
    assert score.error.startswith("invalid")
    assert len(model.provider.requests) == 2
    # the response's judgement keeps both raw replies
    again = mock_model(responses=["I think it is fine.", verdict("maybe")])
    [judged] = await judge_cells(again, [JudgeJob(Target(ref("a", "ana"), load_rubric().units(["Q2"])),
                                                  lambda units: item_messages(units[0], CTX))])
    assert judged.raw == ["I think it is fine.", verdict("maybe")] and judged.error == "1 items unscored"


async def test_repair_can_rescue_a_reply(mock_model: Any) -> None:
    model = mock_model(responses=["not json", verdict("negative")])
    score = await judge_item(model, load_rubric().item("Q3"), CTX)
    assert (score.status, score.value, score.label) == ("ok", -1, "negative")


async def test_model_failure_is_unscored_not_raised(mock_model: Any) -> None:
    model = mock_model(errors=["permanent"])
    score = await judge_item(model, load_rubric().item("Q1"), CTX)
    assert score.status == "unscored" and score.error.startswith("error")


def ref(key: str, profile: str) -> RecordRef:
    return RecordRef(key=key, model="mock/t", configuration="condition-2", exam_id="e", question_id="q",
                     variant=profile, variant_kind="profile")


async def test_jobs_cover_every_item_and_skip_failed_requests(mock_model: Any) -> None:
    rubric = load_rubric()
    units = rubric.units(["Q1", "SBS"])
    seen: list[str] = []

    def prompt(units_asked: Any) -> Any:
        (unit,) = units_asked
        return item_messages(unit, CTX)

    judgements = await judge_cells(mock_model(responses=[verdict("no")]),
                                   [JudgeJob(Target(ref("a", "ana"), units), prompt),
                                    JudgeJob(Target(ref("b", "bo"), units), None, "the tutoring request failed: boom")],
                                   on_done=lambda j: seen.append(j.record.key))
    # one judgement per response, one score per item
    assert [(j.record.key, [(s.unit, s.status) for s in j.scores]) for j in judgements] == [
        ("a", [("Q1", "ok"), ("Q9", "ok")]), ("b", [("Q1", "unscored"), ("Q9", "unscored")])]
    a, b = judgements
    assert (a.status, a.total, a.max_total, a.error) == ("graded", 0, 2, "")
    assert (b.status, b.total, b.error) == ("ungraded", None, "the tutoring request failed: boom")
    assert all(s.error == "the tutoring request failed: boom" for s in b.scores)
    # each judgement carries the identity of the record it is about
    assert [j.record.variant for j in judgements] == ["ana", "bo"]
    assert all(j.grader == "judge:mock/scripted" for j in judgements)
    assert sorted(seen) == ["a", "b"]


def test_long_replies_are_cut_for_the_judge() -> None:
    long_ctx = JudgeContext(learner="l", request="r", reference="ref", response="x" * 10000)
    content = item_messages(load_rubric().item("Q19"), long_ctx)[-1].content
    assert "[... reply cut here for length]" in content and content.count("x") < 5000
