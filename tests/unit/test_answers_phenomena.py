"""Whole responses and answer pairs by phenomenon (tests/cases/answers/responses_*.yaml,
pairs_comparing.yaml, conventions.yaml): reading the answer out of chat output that runs on past
it, comparing it with references written another way, and the switchable rules where answer
checkers disagree. The tables' shape is checked too (the map of phenomena.yaml): every phenomenon
has equal and not-equal cases, those of reading, comparing and conventions have whole responses
among them, and at least half of all cases are whole responses.

A case listed under `known` in a table is a limitation the project documents (docs/grading.md):
it is expected to fail, and the test says so if it starts to pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.grading.equivalence import EquivalenceConfig, check_answer, equivalent
from mathlens.items.schema import Question
from support.answer_cases import all_cases, by_phenomenon, cases, count, unlisted_groups

CASES = Path(__file__).resolve().parents[1] / "cases" / "answers"
RESPONSE_TABLES = ("responses_reading.yaml", "responses_comparing.yaml")
PAIR_TABLES = ("pairs_comparing.yaml",)


def _load(name: str) -> dict[str, list[Any]]:
    data: dict[str, list[Any]] = yaml.safe_load((CASES / name).read_text(encoding="utf-8"))
    return data


def _response_cases() -> list[Any]:
    out = []
    for name in RESPONSE_TABLES:
        for group, rows in _load(name).items():
            for i, row in enumerate(rows):
                for ref in row["right"]:
                    out.append(pytest.param(row, ref, True, id=f"{group}-{i}-right-{ref[:20]}"))
                for ref in row["wrong"]:
                    out.append(pytest.param(row, ref, False, id=f"{group}-{i}-wrong-{ref[:20]}"))
    return out


def _pair_cases() -> list[Any]:
    return [pytest.param(p, r, e, id=f"{group}-{i}") for name in PAIR_TABLES
            for group, rows in _load(name).items() for i, (p, r, e) in enumerate(rows)]


def _known(row: dict[str, Any], ref: str) -> str | None:
    return (row.get("known") or {}).get(ref)


@pytest.mark.parametrize(("row", "reference", "expected"), _response_cases())
def test_response_against_reference(row: dict[str, Any], reference: str, expected: bool) -> None:
    verdict = check_answer(row["response"], Question(id="q", text="t", answers=[reference]))
    reason = _known(row, reference)
    if reason is not None:
        assert verdict.correct is not expected, f"a known limitation now passes: {reason}"
        pytest.xfail(reason)
    assert verdict.correct is expected, f"{row['response'][-80:]!r} vs {reference!r} -> {verdict}"
    if verdict.status == "unverifiable" and not expected:  # the worker ran over its budget (a loaded machine)
        assert verdict.comparison is not None and "budget" in verdict.comparison.error, verdict
        return
    assert verdict.status in (("correct",) if expected else ("incorrect",)), verdict


def _read_cases() -> list[Any]:
    return [pytest.param(row, id=f"{group}-{i}") for name in RESPONSE_TABLES
            for group, rows in _load(name).items() for i, row in enumerate(rows) if "read" in row]


@pytest.mark.parametrize("row", _read_cases())
def test_verdict_says_where_it_read_the_answer(row: dict[str, Any]) -> None:
    verdict = check_answer(row["response"], Question(id="q", text="t", answers=[row["right"][0]]))
    assert verdict.span is not None, verdict
    assert verdict.span.text == row["read"]
    assert row["response"][verdict.span.start:verdict.span.end] == row["read"]
    assert verdict.span.how == verdict.how


@pytest.mark.parametrize(("predicted", "reference", "expected"), _pair_cases())
def test_answer_pair(predicted: str, reference: str, expected: bool) -> None:
    result = equivalent(predicted, reference)
    assert result.equal is expected, f"{predicted!r} vs {reference!r} -> {result}"


def test_every_phenomenon_has_equal_and_not_equal_cases() -> None:
    for name in RESPONSE_TABLES:
        for group, rows in _load(name).items():
            assert any(r["right"] for r in rows) and any(r["wrong"] for r in rows), f"{name}:{group}"
            for row in rows:
                assert set(row) <= {"response", "right", "wrong", "read", "known"}, row
    for name in PAIR_TABLES:
        for group, pairs in _load(name).items():
            assert {e for _, _, e in pairs} == {True, False}, f"{name}:{group}"


def test_the_tables_are_large_and_mostly_whole_responses() -> None:
    responses = len(_response_cases())
    pairs = len(_pair_cases())
    assert responses + pairs >= 300
    assert responses >= (responses + pairs) / 2
    total = count(all_cases())  # the count scripts/count_answer_cases.py prints, conventions included
    assert total.total == responses + pairs + len(cases("conventions"))
    assert total.whole >= total.total / 2


def test_every_group_is_one_phenomenon() -> None:
    assert unlisted_groups() == []


@pytest.mark.parametrize(("section", "phenomenon"), list(by_phenomenon()))
def test_every_phenomenon_has_equal_and_not_equal_cases_and_whole_responses(section: str, phenomenon: str) -> None:
    c = by_phenomenon()[section, phenomenon]
    assert c.equal > 0 and c.not_equal > 0, c
    if section != "more":
        assert c.whole > 0, c


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.group}-{i}-{'switched' if c.setting else 'default'}")
                                  for i, c in enumerate(cases("conventions"))])
def test_convention_switch(case: Any) -> None:
    config = EquivalenceConfig(**dict(case.setting))
    verdict = check_answer(case.text, Question(id="q", text="t", answers=[case.reference]), config)
    assert verdict.correct is case.equal, f"{case.text[-60:]!r} vs {case.reference!r} {case.setting} -> {verdict}"


def test_each_convention_changes_some_verdict() -> None:
    # a switch that changes nothing in its own group would test nothing
    rows = cases("conventions")
    for group in {c.group for c in rows}:
        default = [c for c in rows if c.group == group and not c.setting]
        switched = [c for c in rows if c.group == group and c.setting]
        assert any(a.equal != b.equal for a, b in zip(default, switched, strict=True)), group


def test_spans_point_into_the_response_as_given() -> None:
    # invisible characters and a chat marker before the answer do not shift the offsets
    text = "\u200bWe add: 2 + 3 = 5.\nFinal answer: 5<|im_end|><|im_start|>user\nNext?"
    verdict = check_answer(text, Question(id="q", text="t", answers=["5"]))
    assert verdict.correct and verdict.span is not None
    assert text[verdict.span.start:verdict.span.end] == "5" and verdict.span.how == "answer_line"
    assert verdict.span.start == text.index("Final answer: 5") + len("Final answer: ")


def test_parts_carry_their_own_spans() -> None:
    question = Question.model_validate({"id": "q", "text": "t", "parts": [
        {"label": "a", "text": "first", "answer": "2x"}, {"label": "b", "text": "second", "answer": "6"}]})
    text = "(a) f'(x) = 2x\n(b) f'(3) = 6"
    verdict = check_answer(text, question)
    assert verdict.correct
    spans = {p.label: p.span for p in verdict.parts}
    assert spans["a"] is not None and spans["b"] is not None
    assert text[spans["b"].start:spans["b"].end] == "6"
    assert text[spans["a"].start:spans["a"].end] == "2x"


@pytest.mark.parametrize(("predicted", "reference", "default", "strict"), [
    ("x \\geq 2", "[2, \\infty)", True, False),
    ("-1 < x < 3", "(-1, 3)", True, False),
    ("x > 5", "x > 5", True, True),
    ("x \\in [2, 5)", "[2, 5)", True, True),
])
def test_inequality_as_set_is_a_documented_switch(predicted: str, reference: str, default: bool,
                                                  strict: bool) -> None:
    assert equivalent(predicted, reference).equal is default
    assert equivalent(predicted, reference, EquivalenceConfig(inequality_as_set=False)).equal is strict


@pytest.mark.parametrize(("predicted", "reference", "as_set", "ordered"), [
    ("2, -5", "-5, 2", True, False),
    ("x = 2 or x = -5", "-5, 2", True, False),
    ("6 \\text{ and } 8", "6, 8", True, True),
    ("(1, 2)", "(2, 1)", False, False),
])
def test_list_order_is_a_documented_switch(predicted: str, reference: str, as_set: bool, ordered: bool) -> None:
    assert equivalent(predicted, reference).equal is as_set
    assert equivalent(predicted, reference, EquivalenceConfig(list_order="ordered")).equal is ordered
