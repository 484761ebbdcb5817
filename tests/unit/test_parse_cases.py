"""The parse case tables in tests/cases/parse/: each snippet against its expected SymPy value."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import sympy
import yaml

from mathlens.analyze.verify.parse import parse_math

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "parse"
_EXPECT_NAMES = {"Symbol": sympy.Symbol, "Function": sympy.Function, "Tuple": sympy.Tuple,
                 "Interval": sympy.Interval, "Union": sympy.Union, "FiniteSet": sympy.FiniteSet}


def _load() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        for phenomenon, cases in yaml.safe_load(path.read_text(encoding="utf-8")).items():
            for i, case in enumerate(cases):
                params.append(pytest.param(case, id=f"{path.stem}:{phenomenon}:{i}:{case['text'][:30]}"))
    return params


CASES = _load()


def _expected(text: str) -> Any:
    return sympy.sympify(text, locals=dict(_EXPECT_NAMES))


def _same(got: Any, want: Any) -> bool:
    if got == want:
        return True
    if isinstance(got, sympy.Tuple) and isinstance(want, sympy.Tuple):
        return len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want, strict=True))
    if isinstance(got, sympy.Expr) and isinstance(want, sympy.Expr):
        try:
            return bool(sympy.simplify(got.doit() - want.doit()) == 0)
        except (TypeError, ValueError):
            return False
    return False


def test_there_are_at_least_150_cases() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize("case", CASES)
def test_parse_case(case: dict[str, Any]) -> None:
    parsed = parse_math(case["text"], case.get("notation", "auto"))
    want_status = case.get("status", "ok")
    assert parsed.status == want_status, parsed.error
    if want_status != "ok":
        return
    if "expect" in case:
        assert _same(parsed.value, _expected(case["expect"])), f"got {parsed.value!r}"
    if "sides" in case:
        assert list(parsed.relations) == case["relations"]
        want = [_expected(s) for s in case["sides"]]
        assert len(parsed.sides) == len(want)
        for got, exp in zip(parsed.sides, want, strict=True):
            assert _same(got, exp), f"side {got!r} != {exp!r}"
    if "kind" in case:
        assert parsed.kind == case["kind"]


@pytest.mark.parametrize("text", [
    "(" * 10_000 + "x" + ")" * 10_000,
    "x + " * 250_000 + "1",  # a 1 MB expression
    "\\frac{" * 5000 + "1" + "}" * 5000,
])
def test_adversarial_input_ends_quickly_as_unverifiable(text: str) -> None:
    start = time.perf_counter()
    parsed = parse_math(text)
    assert parsed.status == "unverifiable"
    assert time.perf_counter() - start < 10  # generous: the refusal happens before SymPy runs


def test_runaway_parse_is_cut_by_the_time_budget() -> None:
    # Within every size cap, but expensive: the worker is killed after the budget.
    parsed = parse_math("(" + "+".join(f"x^{k}" for k in range(300)) + ")^12", timeout_s=0.2)
    assert parsed.status in ("ok", "unverifiable")
    if parsed.status == "unverifiable":
        assert "budget" in parsed.error
