"""MAPLE score: hand-computed cases, monotonicity, bounds and both formulas."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.maple.score import error_rate, maple_score

CASES = yaml.safe_load((Path(__file__).resolve().parents[1] / "cases" / "maple" / "score.yaml").read_text())
FLAT = [(group, c) for group, cases in CASES.items() for c in cases]


@pytest.mark.parametrize(("group", "case"), FLAT, ids=[f"{g}:{c['name']}" for g, c in FLAT])
def test_hand_computed(group: str, case: dict[str, Any]) -> None:
    s = maple_score(
        case["counts"], case["weights"], case["v"], case["r"], formula=case.get("formula", "printed")
    )
    assert s.e == pytest.approx(case["e"], abs=1e-12)
    assert s.maple == pytest.approx(case["maple"], abs=1e-8)
    if "r_used" in case:
        assert s.r_used == pytest.approx(case["r_used"])
    if "v_used" in case:
        assert s.v_used == pytest.approx(case["v_used"])


WEIGHTS = {"calc": 1.0, "method": 4.0, "junk": 7.0}


@pytest.mark.parametrize("label", sorted(WEIGHTS))
@pytest.mark.parametrize("formula", ["printed", "prose"])
def test_strictly_increasing_in_each_frequency(label: str, formula: Any) -> None:
    scores = [maple_score({"calc": 1, label: f}, WEIGHTS, 0.6, 0.4, formula).maple for f in range(1, 8)]
    assert all(b > a for a, b in itertools.pairwise(scores)), scores


def test_weight_raises_the_score_of_a_label_above_the_mean_and_lowers_an_absent_one() -> None:
    counts = {"calc": 1, "method": 5}
    base = maple_score(counts, WEIGHTS, 0.5, 0.5).maple
    heavier_frequent = maple_score(counts, {**WEIGHTS, "method": 8.0}, 0.5, 0.5).maple
    heavier_absent = maple_score(counts, {**WEIGHTS, "junk": 14.0}, 0.5, 0.5).maple
    assert heavier_frequent > base > heavier_absent


def test_weight_of_the_only_label_that_occurs_increases_e_monotonically() -> None:
    es = [error_rate({"junk": 2}, {**WEIGHTS, "junk": w}) for w in (0.5, 1, 2, 4, 8, 16)]
    assert all(b > a for a, b in itertools.pairwise(es))
    assert es[-1] < math.log(3)  # a weighted mean never exceeds its largest term


def test_validity_and_redundancy_move_the_formulas_in_opposite_directions() -> None:
    counts, w = {"calc": 2}, {"calc": 1.0}
    printed = [maple_score(counts, w, v, 0.5).maple for v in (0.2, 0.5, 0.9)]
    prose = [maple_score(counts, w, v, 0.5, "prose").maple for v in (0.2, 0.5, 0.9)]
    assert printed == sorted(printed) and printed[0] < printed[-1]
    assert prose == sorted(prose, reverse=True) and prose[0] > prose[-1]
    printed_r = [maple_score(counts, w, 0.5, r).maple for r in (0.2, 0.5, 0.9)]
    prose_r = [maple_score(counts, w, 0.5, r, "prose").maple for r in (0.2, 0.5, 0.9)]
    assert printed_r[0] > printed_r[-1] and prose_r[0] < prose_r[-1]


def test_score_stays_in_unit_interval_at_the_extremes() -> None:
    for v in (0.0, 1.0):
        for r in (0.0, 1.0):
            for formula in ("printed", "prose"):
                s = maple_score({"junk": 1000}, WEIGHTS, v, r, formula)  # type: ignore[arg-type]
                assert 0.0 <= s.maple <= 1.0


def test_parts_are_kept_with_the_score() -> None:
    s = maple_score({"calc": 2, "method": 0}, WEIGHTS, 0.8, 0.1, floor=0.2)
    assert (s.v, s.r, s.v_used, s.r_used, s.floor) == (0.8, 0.1, 0.8, 0.2, 0.2)
    assert s.counts == {"calc": 2}
    assert s.weights == WEIGHTS


@pytest.mark.parametrize(
    ("counts", "weights", "v", "r", "message"),
    [
        ({"x": 1}, {"a": 1.0}, 1.0, 1.0, "no weight"),
        ({"a": -1}, {"a": 1.0}, 1.0, 1.0, "non-negative"),
        ({"a": 1}, {"a": -1.0}, 1.0, 1.0, "non-negative"),
        ({"a": 1}, {"a": 0.0}, 1.0, 1.0, "sum to zero"),
        ({"a": 1}, {"a": 1.0}, 1.2, 1.0, "v must lie"),
        ({"a": 1}, {"a": 1.0}, 1.0, -0.1, "r must lie"),
        ({"a": 1}, {"a": 1.0}, float("nan"), 1.0, "v must lie"),
    ],
)
def test_bad_inputs_raise(
    counts: dict[str, int], weights: dict[str, float], v: float, r: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        maple_score(counts, weights, v, r)


def test_unknown_formula_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown MAPLE formula"):
        maple_score({}, {"a": 1.0}, 1.0, 1.0, formula="inverse")  # type: ignore[arg-type]
