"""Rubric data: the built-in calculus rubric and user rubric files."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.analyze.grading.rubric import builtin_rubric, load_rubric, resolve_rubric, rubric_text
from mathlens.errors import UserError


def test_builtin_calculus_rubric_matches_the_seed() -> None:
    r = builtin_rubric("calculus")
    assert {c.id: c.weight for c in r.criteria} == {"method": 0.30, "execution": 0.40, "final_answer": 0.10,
                                                    "notation": 0.10, "clarity": 0.10}
    bands = {(b.low, b.high) for b in r.partial_credit}
    assert {(0.0, 0.30), (0.40, 0.60), (0.80, 0.90), (1.0, 1.0), (0.0, 0.0)} <= bands
    assert any("without supporting work" in rule for rule in r.rules)
    assert r.label == "calculus@1"
    assert r.max_points("execution", 70) == pytest.approx(28)
    assert r.max_points("execution", None) == pytest.approx(4)  # default 10 points


def test_rubric_text_states_each_maximum() -> None:
    text = rubric_text(builtin_rubric(), 20)
    assert "worth 20 points" in text and "up to 8 points" in text and "40%-60%" in text


def test_user_rubric_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("id: short\nname: Short\ncriteria:\n"
                    "  - {id: answer, name: Answer, weight: 0.5, description: right}\n"
                    "  - {id: work, name: Work, weight: 0.5, description: shown}\n", encoding="utf-8")
    r = resolve_rubric(str(path))
    assert [c.id for c in r.criteria] == ["answer", "work"] and r.max_points("work", 4) == 2
    path.write_text("id: bad\nname: Bad\ncriteria:\n  - {id: a, name: A, weight: 0.7, description: x}\n",
                    encoding="utf-8")
    with pytest.raises(UserError, match=r"add up to 0\.7"):
        load_rubric(path)
    with pytest.raises(UserError, match="unknown rubric"):
        builtin_rubric("nope")
