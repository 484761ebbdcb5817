"""Answer agreement between repeats is computed over answered pairs only; the pairs left out are
counted beside it (case table tests/cases/sensitivity/repeat_agreement.yaml)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.ablation import SensitivityConfig, question_sensitivity
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import RunRecord, Variant

TABLE = yaml.safe_load((Path(__file__).parents[1] / "cases" / "sensitivity" / "repeat_agreement.yaml").read_text())
Q = Question(id="q1", text=TABLE["question"], answers=[TABLE["reference"]])
ROLE = "You are a student. Show every step of your work and end with a line 'Final answer:'."
CONFIG = SensitivityConfig(flow=False, n_resamples=50)


def _rec(repeat: int, side: dict[str, Any]) -> RunRecord:
    return RunRecord(key=f"m|b|e|q1|original|r{repeat}", model="m", configuration="b", exam_id="e",
                     question_id="q1", variant=Variant(), repeat=repeat,
                     messages=[Message(role="system", content=ROLE), Message(role="user", content=Q.text)],
                     config=GenerateConfig(), request_hash="h", content_hash="c",
                     response=TABLE["answers"][side["text"]], finish_reason=side.get("finish", "stop"),
                     created_at=datetime.now(UTC))


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["phenomenon"] for c in TABLE["cases"]])
def test_repeats_are_compared_only_when_both_answer_in_full(case: dict[str, Any]) -> None:
    q = question_sensitivity([_rec(i, side) for i, side in enumerate(case["repeats"])], Q, CONFIG)
    c = q.consistency
    assert c is not None and c.status == "ok" and c.n_runs == len(case["repeats"])
    assert (c.n_answer_pairs, c.n_answer_unanswered, c.n_answer_truncated, c.n_answered_runs) == (
        case["pairs"], case["unanswered"], case["truncated"], case["answered_runs"])
    assert c.n_unknown_pairs == 0
    n = len(case["repeats"])
    assert c.n_answer_pairs + c.n_answer_unanswered + c.n_answer_truncated == n * (n - 1) // 2
    if case["pairs"]:
        assert c.answer_agreement == pytest.approx(case["agree"] / case["pairs"])
        assert c.modal_share == pytest.approx(case["modal"] / case["answered_runs"])
    else:
        assert c.answer_agreement is None and c.modal_share is None
    # the text similarity compares whole responses and keeps every repeat
    assert c.mean_pairwise_cosine is not None


def test_without_reasons_every_repeat_counts_as_answered() -> None:
    from mathlens.analyze.ablation.consistency import repeat_consistency

    a = TABLE["answers"]
    c = repeat_consistency([a["right"], a["slip"]], Q)
    assert (c.n_answer_pairs, c.n_answered_runs, c.answer_agreement) == (1, 2, 0.0)
    with pytest.raises(ValueError, match="one unanswered reason per response"):
        repeat_consistency([a["right"], a["slip"]], Q, unanswered=[None])
