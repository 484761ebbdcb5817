"""The verifier and segmenter on a few real labelled rows from ../shared/data (skips without it)."""

from __future__ import annotations

import json
from pathlib import Path

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.flow.segment import segment_steps
from mathlens.analyze.verify.steps import verify_steps


def test_bigbench_mistake_found_at_its_index(shared_data: Path) -> None:
    rows = [json.loads(x) for x in (shared_data / "bigbench_mistake_arithmetic.jsonl").read_text().splitlines()]
    row = rows[0]  # "(7 - -7 * 4) = (7 - 28)" is the slip, in step 3
    steps = verify_steps(row["steps"], row["input"])
    first = next(i for i, s in enumerate(steps) if s.verdict == "invalid")
    assert first == row["mistake_index"]


def test_processbench_steps_survive_a_round_trip(shared_data: Path) -> None:
    rows = json.loads((shared_data / "processbench_gsm8k.json").read_text())[:20]
    agree = 0
    for row in rows:
        got = [s.text for s in segment_steps("\n\n".join(row["steps"]))]
        agree += int(got == [s.strip() for s in row["steps"]])
    assert agree >= 14  # most GSM8K solutions have one paragraph per step


def test_math500_reference_solution_analyses(shared_data: Path) -> None:
    row = json.loads((shared_data / "math500_test.jsonl").read_text().splitlines()[0])
    result = analyze_solution(row["solution"], row["problem"])
    assert result.metrics.total_steps >= 1
    assert result.metrics.invalid_steps == 0  # r = sqrt(0^2 + 3^2) = 3 is right
    assert any(c.status == "valid" for s in result.steps for c in s.claims)
