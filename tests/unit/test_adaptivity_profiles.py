"""Learner profiles: the balanced seeded generator, YAML files and self-descriptions."""

from __future__ import annotations

from collections import Counter
from itertools import product
from pathlib import Path

import pytest

from mathlens.analyze.adaptivity.profiles import (
    ATTITUDES,
    PERFORMANCE_LEVELS,
    SELF_EFFICACY_LEVELS,
    LearnerProfile,
    generate_profiles,
    load_profile_file,
    load_profiles,
)
from mathlens.errors import UserError


@pytest.mark.parametrize("per_cell", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("seed", [0, 1, 17])
def test_generator_is_balanced(per_cell: int, seed: int) -> None:
    profiles = generate_profiles(per_cell=per_cell, seed=seed)
    assert len(profiles) == 2 * 3 * per_cell
    for grade in (4, 8):
        mine = [p for p in profiles if p.grade == grade]
        assert Counter(p.performance for p in mine) == {lvl: per_cell for lvl in PERFORMANCE_LEVELS}
        for level in PERFORMANCE_LEVELS:
            cell = [p for p in mine if p.performance == level]
            for values, field in ((ATTITUDES, "attitude"), (SELF_EFFICACY_LEVELS, "self_efficacy")):
                counts = Counter(getattr(p, field) for p in cell)
                full = [counts.get(v, 0) for v in values]
                assert max(full) - min(full) <= 1, (grade, level, field, counts)


@pytest.mark.parametrize("seed", [0, 3, 99])
def test_three_per_cell_cover_every_attitude_efficacy_pair_once(seed: int) -> None:
    profiles = generate_profiles(per_cell=3, seed=seed)
    for grade in (4, 8):
        pairs = Counter((p.attitude, p.self_efficacy) for p in profiles if p.grade == grade)
        assert pairs == dict.fromkeys(product(ATTITUDES, SELF_EFFICACY_LEVELS), 1)


def test_generator_is_seeded() -> None:
    a = generate_profiles(per_cell=2, seed=5)
    assert a == generate_profiles(per_cell=2, seed=5)
    others = [generate_profiles(per_cell=2, seed=s) for s in range(6, 12)]
    assert any(o != a for o in others)
    assert len({p.id for p in a}) == len(a)


def test_generated_profiles_carry_grade_knowledge() -> None:
    low4 = next(p for p in generate_profiles() if p.grade == 4 and p.performance == "low")
    assert "know my multiplication facts up to 5 x 5" in low4.prior_knowledge


def test_default_profiles_cross_attitude_and_efficacy_within_each_grade() -> None:
    profiles = load_profiles("default")
    assert len(profiles) == 6
    for grade in (4, 8):
        mine = [p for p in profiles if p.grade == grade]
        assert sorted(p.performance for p in mine) == sorted(PERFORMANCE_LEVELS)
        assert sorted(p.attitude for p in mine) == sorted(ATTITUDES)
        assert sorted(p.self_efficacy for p in mine) == sorted(SELF_EFFICACY_LEVELS)
        assert all(p.prior_knowledge for p in mine)


def test_balanced_spec_parses_per_cell_and_seed() -> None:
    assert load_profiles("balanced:2:9") == generate_profiles(per_cell=2, seed=9)
    with pytest.raises(UserError, match="balanced"):
        load_profiles("balanced:two")


def test_yaml_profiles_and_their_errors(tmp_path: Path) -> None:
    good = tmp_path / "p.yaml"
    good.write_text("- {id: kim, grade: 8, performance: high, description: I love algebra.}\n"
                    "- {id: lee, grade: 4, performance: low}\n", encoding="utf-8")
    kim, lee = load_profile_file(good)
    assert kim.self_description() == "I love algebra."
    assert kim.prior_knowledge == ()  # a written description is not padded with default knowledge
    assert lee.prior_knowledge  # filled in from the shipped statements
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles:\n  - id: a\n    grade: 4\n    performance: medium\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.yaml:4: field 'profiles\[0\].performance'"):
        load_profile_file(bad)
    dup = tmp_path / "dup.yaml"
    dup.write_text("- {id: a, grade: 4, performance: low}\n- {id: a, grade: 8, performance: low}\n", encoding="utf-8")
    with pytest.raises(UserError, match="appears twice"):
        load_profile_file(dup)


def test_self_description_mentions_each_learner_trait() -> None:
    p = LearnerProfile(id="x", grade=8, performance="high", attitude="likes", self_efficacy="low",
                       prior_knowledge=("solve linear equations", "use the Pythagorean theorem"))
    text = p.self_description()
    assert text.startswith("I am in grade 8. My math marks are among the best in my class.")
    assert "I like math" in text and "not confident" in text
    assert "So far I have learned to solve linear equations; use the Pythagorean theorem." in text
    assert text.endswith("Can you help me with this question?")
