"""Validity/redundancy helpers, detector labels, label merging and the ReasonEval backend's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.analyze.maple.judge import JudgedStep
from mathlens.analyze.maple.labels import LabelSet, default_labels
from mathlens.analyze.maple.reasoneval import check_path, score_solution, solution_scores
from mathlens.analyze.maple.steplabels import detector_labels, label_counts, merge_labels
from mathlens.analyze.maple.vr import redundancy_from_steps, validity_from_checks
from mathlens.analyze.quality.detect import IncoherenceConfig
from mathlens.errors import UserError


@pytest.mark.parametrize(
    ("checks", "mode", "v"),
    [([True, True], "share", 1.0), ([True, False, False, None], "share", 1 / 3), ([False], "share", 0.0),
     ([True, None], "min", 1.0), ([True, False], "min", 0.0), ([], "share", 1.0), ([None, None], "min", 1.0)],
)
def test_validity(checks: list[bool | None], mode: str, v: float) -> None:
    assert validity_from_checks(checks, mode)[0] == pytest.approx(v)  # type: ignore[arg-type]


def test_validity_basis_marks_solutions_with_nothing_to_check() -> None:
    assert validity_from_checks([None])[1] == "no-verifiable-steps"


@pytest.mark.parametrize(("n", "redundant", "r"), [(4, [], 0.0), (4, [0, 2], 0.5), (2, [0, 1, 1], 1.0), (0, [], 0.0)])
def test_redundancy(n: int, redundant: list[int], r: float) -> None:
    assert redundancy_from_steps(n, redundant)[0] == pytest.approx(r)


@pytest.mark.parametrize(("n", "redundant", "r"), [(4, [], 0.0), (4, [2], 1.0), (3, [0, 1, 2], 1.0), (3, [7], 0.0)])
def test_redundancy_max_is_reasonevals_rule_on_0_1_step_scores(n: int, redundant: list[int], r: float) -> None:
    value, basis = redundancy_from_steps(n, redundant, "max")
    assert value == r and basis.startswith(f"max over {n} steps")


def test_redundancy_ignores_out_of_range_indices() -> None:
    assert redundancy_from_steps(3, [5, -1, 2])[0] == pytest.approx(1 / 3)


def test_reasoneval_solution_level_rule() -> None:
    s = solution_scores([[0.1, 0.3, 0.6], [0.7, 0.1, 0.2]])
    assert s.step_validity == pytest.approx((0.9, 0.3)) and s.step_redundancy == pytest.approx((0.3, 0.1))
    assert s.validity == pytest.approx(0.3) and s.redundancy == pytest.approx(0.3)


def test_reasoneval_needs_a_local_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="needs a local checkpoint folder"):
        check_path(None)
    with pytest.raises(UserError, match="does not exist"):
        score_solution(tmp_path / "missing", "q", ["s"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"no config\.json"):
        check_path(tmp_path / "empty")


CFG = IncoherenceConfig()


def test_detectors_label_looping_steps_and_missing_answers() -> None:
    steps = ["Let x = 2.", "so so so so so so so so so so so so so so so so so so so so so so so so so so"]
    found = detector_labels(steps, "\n".join(steps), has_answer=False, labels=default_labels(), cfg=CFG)
    assert [(s.step, s.labels, s.source) for s in found] == [(2, ["incoherent_output"], "detector"),
                                                            (2, ["no_solution"], "detector")]
    assert "period" in found[0].reason


def test_detectors_stay_quiet_on_a_clean_solution() -> None:
    steps = ["2 + 3 = 5", "Final answer: 5"]
    assert detector_labels(steps, "\n".join(steps), True, default_labels(), CFG) == []


def test_detectors_skip_labels_missing_from_the_set() -> None:
    only_calc = LabelSet(id="x", labels=[default_labels().get("calculation_error")])  # type: ignore[list-item]
    assert detector_labels([], "", False, only_calc, CFG) == []


def test_merge_counts_a_label_once_per_step() -> None:
    judge = [JudgedStep(step=2, labels=["incoherent_output", "calculation_error"], reason="j")]
    detector = [JudgedStep(step=2, labels=["incoherent_output"], source="detector", reason="d"),
                JudgedStep(step=3, labels=["no_solution"], source="detector")]
    merged = merge_labels(judge, detector)
    assert [(s.step, s.labels) for s in merged] == [(2, ["incoherent_output", "calculation_error"]),
                                                   (3, ["no_solution"])]
    assert label_counts(merged) == {"incoherent_output": 1, "calculation_error": 1, "no_solution": 1}
