"""Segmentation rules against tests/cases/flow/segment.yaml, and offsets into the source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.flow.segment import segment_steps

CASES_FILE = Path(__file__).resolve().parents[1] / "cases" / "flow" / "segment.yaml"


def _load() -> list[Any]:
    data = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    return [pytest.param(case, id=f"{group}:{i}") for group, cases in data.items() for i, case in enumerate(cases)]


@pytest.mark.parametrize("case", _load())
def test_segment_case(case: dict[str, Any]) -> None:
    steps = segment_steps(case["text"])
    assert [s.text for s in steps] == case["steps"]
    if "labels" in case:
        assert [s.label for s in steps] == case["labels"]


def test_offsets_point_into_the_source() -> None:
    text = "  Step 1: x = 2.\n\n  Step 2: so 2x = 4.  \n"
    steps = segment_steps(text)
    assert [s.index for s in steps] == [0, 1]
    for s in steps:
        assert text[s.start:s.end] == s.text


def test_long_paragraph_is_split_into_sentences_without_breaking_math() -> None:
    sentence = "We compute $f(2.5) = 6.25$ and note it. "
    text = sentence * 30
    steps = segment_steps(text, max_chars=200)
    assert len(steps) > 1
    assert all(len(s.text) <= 200 for s in steps)
    assert all(s.text.count("$") % 2 == 0 for s in steps)


def test_empty_text_has_no_steps() -> None:
    assert segment_steps("") == []
    assert segment_steps("  \n\n ") == []
