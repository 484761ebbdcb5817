"""Final-answer extraction and equivalence, driven by the case tables in tests/cases/answers/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.grading.equivalence import EquivalenceConfig, check_answer, equivalent
from mathlens.analyze.readers.answers import extract_final_answer
from mathlens.items.schema import Part, Question

CASES = Path(__file__).resolve().parents[1] / "cases" / "answers"


def _load(name: str) -> dict[str, list[Any]]:
    data: dict[str, list[Any]] = yaml.safe_load((CASES / name).read_text(encoding="utf-8"))
    return data


def _flatten(name: str) -> list[Any]:
    return [pytest.param(group, case, id=f"{group}-{i}") for group, cases in _load(name).items()
            for i, case in enumerate(cases)]


@pytest.mark.parametrize(("group", "case"), _flatten("equivalence.yaml"))
def test_equivalence(group: str, case: list[Any]) -> None:
    predicted, reference, expected = case
    result = equivalent(predicted, reference)
    assert result.equal is expected, f"{group}: {predicted!r} vs {reference!r} -> {result}"
    if result.method not in ("exact", "words"):
        assert result.predicted_form is not None and result.reference_form is not None


@pytest.mark.parametrize(("group", "case"), _flatten("extraction.yaml"))
def test_extraction(group: str, case: dict[str, Any]) -> None:
    question = None
    if case.get("labels"):
        question = Question(id="q", text="t", parts=[Part(label=lb, text="part") for lb in case["labels"]])
    found = extract_final_answer(case["response"], question)
    if "parts" in case:
        assert {p.label: p.text for p in found.parts} == case["parts"]
    else:
        assert (found.text, found.how) == (case["answer"], case["how"])


@pytest.mark.parametrize(("group", "case"), _flatten("checks.yaml"))
def test_check_answer(group: str, case: dict[str, Any]) -> None:
    verdict = check_answer(case["response"], Question.model_validate(case["question"]), cut=case.get("cut", False))
    assert verdict.status == case["status"], verdict
    if verdict.status == "no_answer":  # nothing is shown as its answer, and the reason is given
        assert verdict.predicted is None and verdict.note, verdict
    assert (verdict.choice.form if verdict.choice else None) == case.get("form")
    if "part_statuses" in case:
        assert [p.status for p in verdict.parts] == case["part_statuses"], verdict
        assert all(p.note for p in verdict.parts if p.predicted is None), verdict  # each says why


@pytest.mark.parametrize(("group", "case"), _flatten("equivalence_phenomena.yaml"))
def test_equivalence_phenomena(group: str, case: list[Any]) -> None:
    predicted, reference, expected = case
    result = equivalent(predicted, reference)
    assert result.equal is expected, f"{group}: {predicted!r} vs {reference!r} -> {result}"


@pytest.mark.parametrize(("group", "case"), _flatten("extraction_phenomena.yaml"))
def test_extraction_phenomena(group: str, case: dict[str, Any]) -> None:
    found = extract_final_answer(case["response"])
    assert found.text == case["answer"], f"{group}: {case['response']!r} -> {found}"
    if case["answer"] is not None:
        same = check_answer(case["response"], Question(id="q", text="t", answers=[case["answer"]]))
        assert same.status == "correct", same
    if "not" in case:
        other = check_answer(case["response"], Question(id="q", text="t", answers=[case["not"]]))
        assert other.status == "incorrect", other


@pytest.mark.parametrize(("group", "case"), _flatten("plain_calculus.yaml"))
def test_plain_text_calculus_responses(group: str, case: dict[str, Any]) -> None:
    verdict = check_answer(case["response"], Question(id="q", text="t", answers=[case["reference"]]))
    assert verdict.correct is case["correct"], f"{group}: {case['response']!r} -> {verdict}"


def test_every_phenomenon_has_equal_and_different_pairs() -> None:
    for group, cases in _load("equivalence_phenomena.yaml").items():
        assert {c[2] for c in cases} == {True, False}, group
    for group, rows in _load("plain_calculus.yaml").items():
        assert {r["correct"] for r in rows} == {True, False}, group


def test_case_tables_are_large_enough() -> None:
    total = sum(len(v) for name in ("equivalence.yaml", "extraction.yaml", "checks.yaml")
                for v in _load(name).values())
    assert total >= 200
    phenomena = sum(len(v) for name in ("equivalence_phenomena.yaml", "extraction_phenomena.yaml",
                                        "plain_calculus.yaml") for v in _load(name).values())
    assert phenomena >= 300


def test_value_only_choice_can_be_accepted_by_configuration() -> None:
    q = Question(id="m", text="Which?", choices={"A": "2kg", "D": "6kg"}, answers=["D"])
    lenient = check_answer("Final answer: 6kg", q, EquivalenceConfig(value_only_choice="correct"))
    strict = check_answer("Final answer: 6kg", q)
    assert lenient.status == "correct" and strict.status == "incorrect"
    assert lenient.choice is not None and lenient.choice.form == "value_only"
    assert "instead of its label" in strict.note


def test_parsed_forms_are_recorded() -> None:
    # decided in this process: the forms are the answers as read, numbers folded
    verdict = check_answer("Final answer: ln(e)", Question(id="q", text="t", answers=["\\ln e"]))
    assert verdict.status == "correct"
    assert verdict.comparison is not None and verdict.comparison.predicted_form == "log(e)"
    folded = equivalent("\\frac{10!}{3!\\,7!}", "120")
    assert (folded.predicted_form, folded.reference_form) == ("120", "120")
    # decided by the worker: SymPy's forms
    symbolic = equivalent("\\sin t \\cos t", "\\frac{1}{2}\\sin 2t")
    assert symbolic.equal and symbolic.predicted_form == "sin(t)*cos(t)"


def test_adversarial_answer_is_bounded() -> None:
    # A tower of powers must not hang the checker: it ends as unverifiable or unparseable.
    result = equivalent("9^9^9^9^9", "1", EquivalenceConfig(timeout_s=1.0))
    assert result.status in ("unparseable", "timeout", "different")
    verdict = check_answer("Final answer: 9^9^9^9^9", Question(id="q", text="t", answers=["1"]))
    assert verdict.status != "correct"


def test_reference_that_cannot_be_read_is_not_blamed_on_the_response() -> None:
    verdict = check_answer("Final answer: 3", Question(id="q", text="t", answers=["\\frac{"]))
    assert verdict.status in ("unverifiable", "incorrect")
    assert verdict.status != "correct"
