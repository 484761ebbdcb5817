"""Step judging through a scripted model: valid replies, repairs, and the unjudged path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mathlens.analyze.maple.judge import judge_reply_model, judge_steps, judgement_from_reply, reflect
from mathlens.analyze.maple.labels import default_labels

STEPS = ["Let x = 3.", "Then 2x = 5.", "So the answer is 5."]
LABELS = default_labels()


def reply(*entries: tuple[int, list[str], str], **extra: Any) -> str:
    return json.dumps(
        {"erroneous_steps": [{"step": s, "labels": lab, "reason": r} for s, lab, r in entries], **extra}
    )


async def run(mock_model: Any, responses: list[str], errors: list[str] | None = None, **kw: Any) -> Any:
    model = mock_model(responses=responses, errors=errors)
    result = await judge_steps(model, LABELS, "What is 2*3?", STEPS, "2*3 = 6", "6", **kw)
    return result, model


async def test_valid_reply_is_kept(mock_model: Any) -> None:
    j, model = await run(mock_model, [reply((2, ["calculation_error"], "2*3 is 6, not 5"))])
    assert j.status == "ok" and j.attempts == 1
    assert [(s.step, s.labels, s.reason) for s in j.steps] == [(2, ["calculation_error"], "2*3 is 6, not 5")]
    # The schema sent to the backend restricts labels to the set's ids and steps to 1..3.
    schema = model.provider.requests[0][2]
    item = schema["$defs"]["ErroneousStep"]["properties"]
    assert set(item["labels"]["items"]["enum"]) == set(LABELS.ids)
    assert item["step"]["maximum"] == 3 and item["step"]["minimum"] == 1


async def test_prompt_carries_labels_question_reference_and_numbered_steps(mock_model: Any) -> None:
    _, model = await run(mock_model, [reply()])
    user = model.provider.requests[0][0][-1].content
    assert "calculation_error" in user and "What is 2*3?" in user and "2*3 = 6" in user
    assert "[2] Then 2x = 5." in user and "(3 steps)" in user


async def test_empty_list_means_no_erroneous_step(mock_model: Any) -> None:
    j, _ = await run(mock_model, [reply()])
    assert j.status == "ok" and j.steps == []


async def test_invalid_then_valid_is_repaired(mock_model: Any) -> None:
    j, model = await run(mock_model, ["not json at all", reply((3, ["no_solution"], "stops"))])
    assert j.status == "ok" and j.attempts == 2 and j.steps[0].labels == ["no_solution"]
    assert "not valid JSON" in model.provider.requests[1][0][-1].content


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (reply((4, ["calculation_error"], "no such step")), "less than or equal to 3"),
        (reply((0, ["calculation_error"], "zero")), "greater than or equal to 1"),
        (reply((1, ["typo_label"], "unknown")), "erroneous_steps.0.labels.0"),
        (reply((1, [], "no label")), "at least 1"),
        (json.dumps({"steps": []}), "erroneous_steps"),
        (reply((1, ["calculation_error"], "x" * 400)), "at most 300"),
    ],
)
async def test_unusable_output_is_unjudged(mock_model: Any, bad: str, why: str) -> None:
    j, _ = await run(mock_model, [bad, bad])
    assert j.status == "unjudged" and j.steps == []
    assert why in j.error and j.raw == [bad, bad]


async def test_model_failure_is_unjudged(mock_model: Any) -> None:
    j, _ = await run(mock_model, [reply()], errors=["permanent"])
    assert j.status == "unjudged" and j.error.startswith("error:")


async def test_no_steps_is_unjudged_without_a_call(mock_model: Any) -> None:
    model = mock_model(responses=[reply()])
    j = await judge_steps(model, LABELS, "q", [], None)
    assert j.status == "unjudged" and model.provider.requests == []


async def test_judge_estimated_validity_and_redundancy(mock_model: Any) -> None:
    j, model = await run(
        mock_model, [reply((1, ["incorrect_method"], "m"), validity=0.4, redundancy=0.2)], estimate_vr=True
    )
    assert (j.validity, j.redundancy) == (0.4, 0.2)
    assert "validity" in model.provider.requests[0][2]["required"]


async def test_out_of_range_validity_is_unjudged(mock_model: Any) -> None:
    bad = reply(validity=1.7, redundancy=0.2)
    j, _ = await run(mock_model, [bad, bad], estimate_vr=True)
    assert j.status == "unjudged"


def test_repeated_steps_are_merged_and_sorted() -> None:
    cls = judge_reply_model(tuple(LABELS.ids), 3)
    value = cls.model_validate_json(
        reply(
            (3, ["no_solution"], "b"),
            (1, ["calculation_error"], "a"),
            (3, ["no_solution", "incoherent_output"], "c"),
        )
    )
    j = judgement_from_reply(value)
    assert [(s.step, s.labels) for s in j.steps] == [
        (1, ["calculation_error"]),
        (3, ["no_solution", "incoherent_output"]),
    ]
    assert j.steps[1].reason == "b; c"


async def test_reflection_is_stored_and_failures_are_data(mock_model: Any) -> None:
    ok = await reflect(mock_model(responses=["I doubled 3 wrongly."]), "q", "s", "ref", "6")
    assert ok.status == "ok" and ok.text == "I doubled 3 wrongly."
    empty = await reflect(mock_model(responses=["   "]), "q", "s", "ref", "6")
    assert empty.status == "error" and "empty" in empty.error
    failed = await reflect(mock_model(errors=["permanent"]), "q", "s", None, None)
    assert failed.status == "error"


async def test_raw_control_characters_inside_strings_are_tolerated(mock_model: Any) -> None:
    # A literal newline inside the reason string: invalid strict JSON, same content otherwise.
    bad = '{"erroneous_steps": [{"step": 2, "labels": ["calculation_error"], "reason": "2*3\nis 6"}]}'
    j, _ = await run(mock_model, [bad, bad])
    assert j.status == "ok" and j.steps[0].reason == "2*3\nis 6" and j.attempts == 1
