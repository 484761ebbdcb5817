"""The answer-flip rate is computed over answered pairs only; the pairs left out are counted."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.ablation import SensitivityConfig, question_sensitivity
from mathlens.analyze.ablation.tables import exam_rows, rows_csv
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import RunRecord, Variant

TABLE = yaml.safe_load((Path(__file__).parents[1] / "cases" / "sensitivity" / "answered_pairs.yaml").read_text())
Q = Question(id="q1", text=TABLE["question"], answers=[TABLE["reference"]])
ROLE = "You are a student. Show every step of your work and end with a line 'Final answer:'."
CONFIG = SensitivityConfig(flow=False, n_resamples=50)


def _rec(side: dict[str, Any], variant: Variant | None = None) -> RunRecord:
    v = variant or Variant()
    return RunRecord(key=f"m|b|e|q1|{v.name}|r0", model="m", configuration="b", exam_id="e", question_id="q1",
                     variant=v, messages=[Message(role="system", content=ROLE),
                                          Message(role="user", content=v.question_text or Q.text)],
                     config=GenerateConfig(), request_hash="h", content_hash="c", response=side["text"],
                     finish_reason=side.get("finish", "stop"), created_at=datetime.now(UTC))


def _variant(i: int) -> Variant:
    return Variant(name=f"coordinate-{i}", kind="ablation", element_type="coordinate", element_text="(-1, 4)",
                   question_text=Q.text.replace("(-1, 4)", "the point"))


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["phenomenon"] for c in TABLE["cases"]])
def test_a_pair_is_compared_only_when_both_responses_answer_in_full(case: dict[str, Any]) -> None:
    q = question_sensitivity([_rec(case["original"]), _rec(case["variant"], _variant(1))], Q, CONFIG)
    (pair,) = q.details
    if case["compared"]:
        assert pair.answer == case["answer"] and pair.answer_left_out is None
        assert q.answer_pairs.compared == 1 and q.answer_flip_rate == (1.0 if case["answer"] == "flipped" else 0.0)
    else:
        assert pair.answer is None and pair.answer_left_out == case["left_out"]
        assert q.answer_pairs.compared == 0 and q.answer_flip_rate is None
    assert (q.answer_pairs.unanswered, q.answer_pairs.truncated) == (
        int(case.get("left_out") == "no_final_answer"), int(case.get("left_out") == "truncated"))


def test_the_rate_rests_on_answered_pairs_and_the_table_counts_the_rest() -> None:
    cases = {c["phenomenon"]: c for c in TABLE["cases"]}
    original = cases["both answered, different answers"]["original"]
    variants = [cases["both answered, different answers"]["variant"],    # flipped
                cases["both answered, same answer"]["variant"],          # same
                cases["the variant states no final answer (stops mid-work)"]["variant"],
                cases["the token cap cut the variant in the middle of its work"]["variant"],
                {"text": "1. f_x = 2x.\nFinal answer: <-2, 1>\nThen", "finish": "length"}]
    records = [_rec(original), *(_rec(v, _variant(i)) for i, v in enumerate(variants, start=1))]
    q = question_sensitivity(records, Q, CONFIG)
    # Over all five pairs a naive rate would count three "flips" (two of them answers never given).
    assert q.answer_pairs.compared == 2 and q.answer_flip_rate == 0.5
    assert (q.answer_pairs.unanswered, q.answer_pairs.truncated) == (2, 1)
    assert q.answer_pairs.describe() == "2 answered pair(s); left out 2 without a final answer, 1 cut by the token cap"
    (row,) = exam_rows([q, q], {}, CONFIG)  # the same question twice: the row adds its counts up
    assert (row.answer_pairs.compared, row.answer_pairs.unanswered, row.answer_pairs.truncated) == (4, 4, 2)
    assert row.answer_flip_rate.mean == 0.5
    header, line = rows_csv([row]).strip().split("\n")
    cols = dict(zip(header.split(","), line.split(","), strict=True))
    assert (cols["answer_pairs_compared"], cols["answer_pairs_unanswered"], cols["answer_pairs_truncated"]) == (
        "4", "4", "2")
