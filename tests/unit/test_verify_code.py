"""Output blocks under code blocks: each case of tests/cases/flow/code_outputs.yaml, then the
check inside `verify_steps` and the reasoning graph."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.verify.code import KIND, read_code
from mathlens.analyze.verify.steps import verify_steps

CASES = yaml.safe_load((Path(__file__).resolve().parents[1] / "cases" / "flow" / "code_outputs.yaml").read_text())
PARAMS = [pytest.param(case, id=f"{group}:{i}") for group, cases in CASES.items() for i, case in enumerate(cases)]


def _solution(code: str, output: str) -> str:
    return f"We work it out in Python.\n```python\n{code}\n```\n```output\n{output}\n```\nSo that is the answer."


@pytest.mark.parametrize("case", PARAMS)
def test_output_block(case: dict[str, Any]) -> None:
    started = time.perf_counter()
    reading = read_code(_solution(case["code"], case["output"]).split("\n"))
    assert time.perf_counter() - started < 1.0  # hostile code is refused before it is worked out
    (check,) = [code for code in reading.steps.values() if code.claims]
    assert [c.status for c in check.claims] == case["claims"]
    assert all(c.kind == KIND for c in check.claims)
    if "expected" in case:
        assert [c.expected for c in check.claims if c.status == "invalid"] == case["expected"]
    if "reason" in case:
        assert case["reason"] in check.claims[0].reason.lower()


def _claims(steps: list[str]) -> list[tuple[int, str, str]]:
    return [(i, c.status, c.expected) for i, code in read_code(steps).steps.items() for c in code.claims]


def test_no_output_block_means_no_claim() -> None:
    assert _claims(["```python\nx = 2\nprint(x)\n```", "So x is 2."]) == []
    # prose between the code and an output block: the output is not shown as that code's
    assert _claims(["```python\nprint(2)\n```", "Running it:", "```output\n3\n```"]) == []


def test_an_output_cut_by_the_token_cap_is_checked_as_far_as_it_goes() -> None:
    assert _claims(["```python\nprint(6 * 7)\n```", "```output\n41"]) == [(1, "invalid", "42")]


def test_code_is_read_as_code_and_prose_around_it_as_prose() -> None:
    reading = read_code(["So we add them:\n```python\nsavings = 11\ncost_comic_book = 5",
                         "left = savings - cost_comic_book", "print(left)\n```\nwhich gives the answer."])
    assert reading.texts == ["So we add them:", "", "which gives the answer."]
    assert [(c.defines, c.mentions, c.statements) for c in reading.steps.values()] == [
        (["savings", "cost_comic_book"], [], 2), (["left"], ["savings", "cost_comic_book"], 1), ([], ["left"], 1)]
    # a block cut short inside a statement: the whole statements before it are read
    cut = read_code(["```python\nrate = 3\ntotal = rate * (4 +"])
    assert cut.steps[0].defines == ["rate"]


def test_the_step_of_the_output_block_is_invalid_and_uses_the_code() -> None:
    text = ("Step 1: Add the costs in Python.\n```python\nadults = 2 * 12\nchild = 8\npopcorn = 2 * 3\n"
            "total = adults + child + popcorn\nprint(total)\n```\n```output\n54\n```\nFinal answer: 54")
    flow = analyze_solution(text)
    bad = [s for s in flow.steps if s.verdict == "invalid"]
    assert len(bad) == 1 and "```output" in bad[0].text
    assert [(c.kind, c.expected) for c in bad[0].claims if c.status == "invalid"] == [(KIND, "38")]
    assert flow.metrics.first_invalid_step == bad[0].index
    # the output step uses the step that assigned what it printed, which is therefore not redundant
    defines_total = next(s.index for s in flow.steps if "total = adults" in s.text)
    assert defines_total in bad[0].uses and defines_total not in flow.metrics.redundant_steps


def test_the_answer_step_uses_an_output_written_as_a_decimal() -> None:
    text = ("```python\nloss = 1.25 * 5\ngain = 1.75 * 5\nprint(loss - gain)\n```\n```output\n-2.5\n```\n"
            "The final answer is \\(\\boxed{-2.5}\\).")
    flow = analyze_solution(text)
    output = next(s.index for s in flow.steps if "```output" in s.text)
    assert output in flow.steps[-1].uses and flow.metrics.redundant_steps == []


def test_verify_steps_checks_outputs_of_steps_given_one_by_one() -> None:
    steps = ["```python", "x = 5\ny = x ** 2", "print(y - x)", "```", "```output", "20", "```"]
    results = verify_steps(steps)
    claims = [c for r in results for c in r.claims if c.kind == KIND]
    assert [(c.status, c.text) for c in claims] == [("valid", "prints 20")]
    # the claim is the step's that holds the output's first line
    assert [i for i, r in enumerate(results) if any(c.kind == KIND for c in r.claims)] == [5]
    assert set(results[5].mentions) == {"x", "y"}
