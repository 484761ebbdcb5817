"""Hostile responses through the answers analysis (tests/cases/answers/hostile.yaml): every one gets a
verdict, none is graded correct, answers too large to parse are refused with the reason before any
parser sees them, and what is stored stays small. Time and memory are measured by
bench/bench_answers_hostile.py, not asserted here."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.grading import equivalence
from mathlens.analyze.grading.analyzer import check_record
from mathlens.analyze.grading.compliance import FormatRules
from mathlens.analyze.grading.equivalence import DEFAULT_CONFIG
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import RunRecord

SPECS: dict[str, dict[str, Any]] = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "cases" / "answers" / "hostile.yaml").read_text(encoding="utf-8"))
QUESTION = Question(id="q", text="Find the minimum of x^2 + 3x.", answers=["-9/4"])


def _record(text: str) -> RunRecord:
    return RunRecord(key="k", model="m", configuration="baseline", exam_id="e", question_id="q",
                     messages=[Message(role="user", content=QUESTION.text)], config=GenerateConfig(),
                     request_hash="r", content_hash="c", response=text, finish_reason="stop",
                     created_at=datetime.now(UTC))


@pytest.mark.parametrize("name", list(SPECS))
def test_hostile_response_gets_a_bounded_verdict(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = SPECS[name]
    text = "".join(part * times for part, times in spec["parts"])
    sent: list[str] = []
    symbolic = equivalence._symbolic
    monkeypatch.setattr(equivalence, "_symbolic", lambda p, r, c, d: sent.append(p) or symbolic(p, r, c, d))
    entry = check_record(_record(text), QUESTION, FormatRules(latex=False, markup=False), DEFAULT_CONFIG)
    verdict = entry.verdict
    assert verdict is not None
    assert (entry.status == "correct") is (name == "normal"), entry.status
    if "refused" in spec:
        assert verdict.comparison is not None and spec["refused"] in verdict.comparison.error, verdict.comparison
        assert sent == []  # refused before the worker
    assert all(len(p) <= 2_000 for p in sent)  # nothing longer than an answer reaches the worker
    assert verdict.predicted is None or len(verdict.predicted) <= 2_001
    if verdict.span is not None:
        assert 0 <= verdict.span.start <= verdict.span.end <= len(text) and len(verdict.span.text) <= 500
    stored = entry.model_dump_json()
    assert len(stored) < 20_000, len(stored)
