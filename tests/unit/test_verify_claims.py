"""Step verification against tests/cases/flow/claims.yaml (real SymPy in real workers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sympy
import yaml

from mathlens.analyze.verify.parse import parse_math
from mathlens.analyze.verify.steps import VerifyConfig, verify_steps

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "flow"


def _load() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("claims*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        params.extend(pytest.param(case, id=f"{path.stem}:{group}:{i}:{case['step'][:40]}")
                      for group, cases in data.items() for i, case in enumerate(cases))
    return params


def test_every_case_file_has_slips_to_catch() -> None:
    cases = [c.values[0] for c in _load()]
    assert len(cases) >= 100
    assert sum("invalid" in c["claims"] for c in cases) >= 30


def _equal(reported: str, want: str) -> bool:
    got = parse_math(reported.replace("**", "^").removesuffix(" + C"))
    exp = sympy.sympify(want)
    return got.ok and sympy.simplify(got.value - exp) == 0


@pytest.mark.parametrize("case", _load())
def test_claims(case: dict[str, Any]) -> None:
    *_, step = verify_steps([*case.get("before", []), case["step"]], case.get("question"))
    assert step.status == "ok", step.error
    statuses = [c.status for c in step.claims]
    assert statuses == case["claims"], [(c.text, c.status, c.reason) for c in step.claims]
    for claim, want in zip(step.claims, case.get("expected") or [], strict=False):
        if want is not None:
            assert _equal(claim.expected, want), f"{claim.text}: expected {claim.expected!r}, want {want}"
    if "kinds" in case:
        assert [c.kind for c in step.claims] == case["kinds"], [(c.text, c.kind, c.method) for c in step.claims]
    if "texts" in case:
        assert [c.text for c in step.claims] == case["texts"]


def test_definitions_carry_to_later_steps() -> None:
    steps = verify_steps(["Let A = 2 + 3 = 5.", "Then A * 4 = 21."])
    assert [c.status for c in steps[1].claims] == ["invalid"]
    assert steps[1].claims[0].expected == "20"


def test_unreduced_log_is_noted() -> None:
    [step] = verify_steps(["So the answer is x ln(e)."])
    assert any("log(E)" in note and "= 1" in note for note in step.notes)


def test_step_over_budget_is_unverifiable_and_later_steps_still_run() -> None:
    heavy = "integral of " + "*".join(f"sin({k}x + {k})" for k in range(1, 9)) + " dx = 0"
    config = VerifyConfig(step_timeout_s=0.3, solution_budget_s=30)
    steps = verify_steps([heavy, "2 + 2 = 4"], config=config)
    assert steps[0].status in ("timeout", "ok")
    assert steps[1].verdict == "valid"


def test_solution_budget_skips_the_rest() -> None:
    config = VerifyConfig(step_timeout_s=1.0, solution_budget_s=0.0)
    steps = verify_steps(["1 + 1 = 2", "2 + 2 = 4"], config=config)
    assert [s.status for s in steps] == ["skipped", "skipped"]
    assert all(s.verdict == "unverifiable" for s in steps)


def test_an_angle_expected_in_a_statement_written_in_degrees_is_given_in_degrees() -> None:
    *_, plain = verify_steps(["The angles give 30° + 45° = 85°."])
    *_, latex = verify_steps([r"\[ x + y + 180^\circ - (x + y) = 360^\circ \]"])
    *_, radians = verify_steps(["So pi/4 + pi/4 = pi"])
    assert [c.expected for c in plain.claims] == ["75°"]
    assert [c.expected for c in latex.claims] == ["180°"]
    assert [c.expected for c in radians.claims] == ["pi/2"]  # no degree mark: left in radians
