"""Recorded real outputs of both embedded models against labels written by hand.

The case table tests/cases/quality/real/embedded_outputs.yaml holds responses that the embedded
models really produced (see its header); each `expect` was labelled by reading the response. These
tests check that mathlens sees in them what a reader sees: the output-quality flags, the final-answer
verdict, and the slips the step checker reports with their expected values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.grading.equivalence import EquivalenceConfig, check_answer
from mathlens.analyze.quality import likely_cause, quality_flags
from mathlens.items.loaders import load_items
from mathlens.items.schema import Question

TABLE = Path(__file__).resolve().parents[1] / "cases" / "quality" / "real" / "embedded_outputs.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
FLAGS = ("empty", "echo", "repetition_loop", "truncated", "no_final_answer", "wrong_script")


def _question(ref: str | None) -> Question | None:
    if not ref:
        return None
    exam, _, qid = ref.partition("/")
    return next(q for q in load_items(exam).questions if q.id == qid)


def _ids(cases: list[dict[str, Any]]) -> list[Any]:
    return [pytest.param(c, id=c["id"]) for c in cases]


def test_table_has_both_models() -> None:
    models = {c["model"] for c in CASES}
    assert models == {"embedded/qwen2.5-coder-0.5b", "embedded/gemma3-270m"}


@pytest.mark.parametrize("case", _ids(CASES))
def test_quality_flags_match_the_hand_labels(case: dict[str, Any]) -> None:
    flags = quality_flags(case["response"], system_role=case["system_role"], prompt=case["prompt"],
                          finish_reason=case["finish_reason"], question=_question(case["expect"].get("question")))
    assert {f for f in FLAGS if getattr(flags, f)} == set(case["expect"]["flags"]), flags.details
    degenerate = bool({"empty", "echo", "repetition_loop", "wrong_script"} & set(case["expect"]["flags"]))
    assert flags.degenerate is degenerate


@pytest.mark.parametrize("case", _ids([c for c in CASES if "answer" in c["expect"]]))
def test_final_answer_verdict_matches_the_hand_label(case: dict[str, Any]) -> None:
    question = _question(case["expect"]["question"])
    assert question is not None
    verdict = check_answer(case["response"], question, EquivalenceConfig())
    assert verdict.status == case["expect"]["answer"], verdict


@pytest.mark.parametrize("case", _ids([c for c in CASES if c["expect"].get("invalid")]))
def test_step_checker_reports_the_real_slips(case: dict[str, Any]) -> None:
    question = _question(case["expect"]["question"])
    result = analyze_solution(case["response"], question.prompt_text() if question else case["prompt"])
    expected = {c.expected.replace(" ", "") for s in result.steps for c in s.claims if c.status == "invalid"}
    for value in case["expect"]["invalid"]:
        assert value in expected, (value, expected)


def test_gemma_outputs_name_the_base_model_cause() -> None:
    gemma = [c for c in CASES if c["model"] == "embedded/gemma3-270m"]
    flags = [quality_flags(c["response"], system_role=c["system_role"], prompt=c["prompt"],
                           finish_reason=c["finish_reason"]) for c in gemma]
    assert sum(f.degenerate for f in flags) > len(flags) / 2
    assert "base" in likely_cause(flags)
