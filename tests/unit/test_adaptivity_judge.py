"""Judge scoring per item through the structured-output path, with scripted models."""

from __future__ import annotations

import json
from typing import Any

from mathlens.analyze.adaptivity.judge import JudgeContext, JudgeJob, item_messages, judge_item, judge_jobs
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.runs.documents import RecordRef

CTX = JudgeContext(learner="grade 4, low performer", request="What is 3 + 4?",
                   reference="Correct answer: 7", response="Let's count on from 3: 4, 5, 6, 7. So 3 + 4 = 7.")


def verdict(rating: str, rationale: str = "Counts on step by step.") -> str:
    return json.dumps({"rationale": rationale, "rating": rating})


async def test_ok_verdict_becomes_the_item_score(mock_model: Any) -> None:
    model = mock_model(responses=[verdict("yes")])
    score = await judge_item(model, load_rubric().item("Q9"), CTX)
    assert (score.status, score.score, score.label, score.rationale) == ("ok", 1, "yes", "Counts on step by step.")
    assert score.source == "judge:mock/scripted"
    (messages, _config, schema), = model.provider.requests
    assert schema is not None and schema["properties"]["rating"]["enum"] == ["no", "yes"]
    assert "Let's count on from 3" in messages[-1].content and "Rubric question Q9" in messages[-1].content


async def test_reversed_item_yes_means_zero(mock_model: Any) -> None:
    score = await judge_item(mock_model(responses=[verdict("yes")]), load_rubric().item("Q13"), CTX)
    assert (score.status, score.score) == ("ok", 0)


async def test_unusable_output_is_unscored_after_one_repair(mock_model: Any) -> None:
    model = mock_model(responses=["I think it is fine.", verdict("maybe")])
    score = await judge_item(model, load_rubric().item("Q2"), CTX)
    assert score.status == "unscored" and score.score is None
    assert score.error is not None and score.error.startswith("invalid")
    assert len(score.raw) == 2 and len(model.provider.requests) == 2


async def test_repair_can_rescue_a_reply(mock_model: Any) -> None:
    model = mock_model(responses=["not json", verdict("negative")])
    score = await judge_item(model, load_rubric().item("Q3"), CTX)
    assert (score.status, score.score) == ("ok", -1)


async def test_model_failure_is_unscored_not_raised(mock_model: Any) -> None:
    model = mock_model(errors=["permanent"])
    score = await judge_item(model, load_rubric().item("Q1"), CTX)
    assert score.status == "unscored" and score.error is not None and score.error.startswith("error")


def ref(key: str, profile: str) -> RecordRef:
    return RecordRef(key=key, model="mock/t", configuration="condition-2", exam_id="e", question_id="q",
                     variant=profile, variant_kind="profile")


async def test_jobs_cover_every_item_and_skip_failed_requests(mock_model: Any) -> None:
    rubric = load_rubric()
    items = rubric.select(["Q1", "SBS"])
    seen: list[str] = []
    scores = await judge_jobs(mock_model(responses=[verdict("no")]),
                              [JudgeJob(ref("a", "ana"), CTX),
                               JudgeJob(ref("b", "bo"), None, "the tutoring request failed: boom")],
                              items, on_score=lambda s: seen.append(s.key))
    assert [(s.key, s.item_id, s.status) for s in scores] == [
        ("a", "Q1", "ok"), ("a", "Q9", "ok"), ("b", "Q1", "unscored"), ("b", "Q9", "unscored")]
    assert scores[2].error == "the tutoring request failed: boom"
    # each score carries the identity of the record it is about
    assert [s.record.variant for s in scores] == ["ana", "ana", "bo", "bo"]
    assert all(s.source == "judge:mock/scripted" for s in scores)
    assert sorted(seen) == ["a", "a", "b", "b"]


def test_long_replies_are_cut_for_the_judge() -> None:
    long_ctx = JudgeContext(learner="l", request="r", reference="ref", response="x" * 10000)
    content = item_messages(load_rubric().item("Q19"), long_ctx)[-1].content
    assert "[... reply cut here for length]" in content and content.count("x") < 5000
