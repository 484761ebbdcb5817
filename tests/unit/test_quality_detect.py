"""Judge-free detection of incoherent output and missing solutions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.quality.detect import incoherence, is_no_solution, repeated_ngram_share

CASES = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "cases" / "maple" / "incoherence.yaml").read_text()
)
FLAT = [(group, c) for group, cases in CASES.items() for c in cases]


@pytest.mark.parametrize(("group", "case"), FLAT, ids=[f"{g}:{c['name']}" for g, c in FLAT])
def test_incoherence_cases(group: str, case: dict[str, Any]) -> None:
    assert [h.check for h in incoherence(case["text"])] == case["checks"]


def test_hits_say_what_they_saw() -> None:
    (hit,) = incoherence("answer: " + "7" * 45)
    assert hit.check == "char_run" and "45" in hit.detail


def test_repeated_ngram_share_by_hand() -> None:
    # grams: (a b c d) (b c d a) (c d a b) (d a b c) (a b c d) -> 1 repeat of 5
    assert repeated_ngram_share(["a", "b", "c", "d", "a", "b", "c", "d"]) == pytest.approx(1 / 5)
    assert repeated_ngram_share(["a", "b"]) == 0.0


@pytest.mark.parametrize(
    ("text", "has_answer", "expected"),
    [
        ("", True, True),
        ("   ", False, True),
        ("2 + 2 = 4", False, True),
        ("Final answer: 4", True, False),
        (None, False, True),
    ],
)
def test_no_solution(text: str | None, has_answer: bool, expected: bool) -> None:
    assert is_no_solution(text, has_answer) is expected
