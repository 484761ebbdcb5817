"""Results tables, CSV and figure data from hand-made solution results."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from mathlens.analyze.maple.aggregate import BootstrapConfig, figure_data, group_rows, write_csv
from mathlens.analyze.maple.results import SolutionMaple, SolutionStatus
from mathlens.runs.documents import RecordRef


def sol(i: int, model: str, level: int | None, subject: str | None, answer: str, maple: float | None,
        status: SolutionStatus = "ok", counts: dict[str, int] | None = None, configuration: str = "baseline",
        variant: str = "original") -> SolutionMaple:
    kind = "original" if variant == "original" else "ablation"
    ref = RecordRef(key=f"k{i}-{configuration}-{variant}", model=model, configuration=configuration, exam_id="e",
                    question_id=f"q{i}", variant=variant, variant_kind=kind)
    return SolutionMaple(record=ref, level=level, subject=subject, answer_status=answer, maple=maple,
                         e=None if maple is None else maple, status=status, counts=counts or {})


SOLS = [
    sol(1, "m", 1, "Algebra", "correct", 0.0),
    sol(2, "m", 1, "Algebra", "incorrect", 0.6, counts={"calculation_error": 1}),
    sol(3, "m", 1, "Geometry", "incorrect", None, status="unjudged"),
    sol(4, "m", 5, "Geometry", "unparseable", 0.9, counts={"no_solution": 1, "calculation_error": 2}),
    sol(5, "m", 5, "Algebra", "unverifiable", None, status="unverifiable"),
    sol(6, "m", None, None, "error", None, status="error"),
    sol(7, "other", 1, "Algebra", "correct", 0.0),
]
BOOT = BootstrapConfig(n_resamples=200)


def test_rows_by_level() -> None:
    rows = {(r.model, r.group): r for r in group_rows(SOLS, "level", BOOT)}
    assert list(rows) == [("m", "1"), ("m", "5"), ("m", "unknown"), ("other", "1")]
    one = rows[("m", "1")]
    assert (one.n, one.n_correct, one.n_scored, one.n_unjudged) == (3, 1, 2, 1)
    assert one.accuracy.estimate == pytest.approx(1 / 3)
    assert one.mean_maple.estimate == pytest.approx(0.3)  # (0 + 0.6) / 2; unjudged left out
    assert one.mean_maple_incorrect.estimate == pytest.approx(0.6)
    assert one.label_counts == {"calculation_error": 1}
    five = rows[("m", "5")]
    assert five.n == 1 and five.accuracy.estimate == 0.0  # the unverifiable one is not counted
    assert rows[("m", "unknown")].n == 0 and rows[("m", "unknown")].accuracy.status == "empty"


def test_rows_by_subject_follow_math_order_and_overall() -> None:
    rows = group_rows(SOLS, "subject", BOOT)
    assert [r.group for r in rows if r.model == "m"] == ["Algebra", "Geometry", "unknown"]
    (overall_m,) = [r for r in group_rows(SOLS, "all", BOOT) if r.model == "m"]
    assert overall_m.n == 4 and overall_m.n_scored == 3
    assert overall_m.mean_maple.estimate == pytest.approx(0.5)
    assert overall_m.mean_maple.low is not None and overall_m.mean_maple.low <= 0.5 <= overall_m.mean_maple.high


def test_csv_has_empty_cells_for_missing_values(tmp_path: Path) -> None:
    path = write_csv(group_rows(SOLS, "level", BOOT), tmp_path / "t.csv")
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 4
    unknown = next(r for r in rows if r["group"] == "unknown")
    assert unknown["accuracy"] == "" and unknown["mean_maple"] == ""
    assert "nan" not in path.read_text().lower()
    assert float(rows[0]["accuracy"]) == pytest.approx(1 / 3)


def test_figure_points_carry_the_group_key() -> None:
    fig = figure_data(group_rows(SOLS, "level", BOOT), "level")
    first = fig.points[0]
    assert fig.x == "level" and (first.model, first.configuration, first.variant, first.x) == ("m", "baseline",
                                                                                                "original", "1")
    assert first.accuracy == pytest.approx(1 / 3) and first.maple == pytest.approx(0.3)
    with pytest.raises(ValueError, match="not by level"):
        figure_data(group_rows(SOLS, "level", BOOT), "subject")


def test_configurations_and_variants_are_never_pooled() -> None:
    sols = [
        sol(1, "m", 1, "Algebra", "correct", 0.0),
        sol(2, "m", 1, "Algebra", "correct", 0.0),
        sol(1, "m", 1, "Algebra", "incorrect", 0.8, configuration="rag"),
        sol(2, "m", 1, "Algebra", "correct", 0.0, configuration="rag"),
        sol(1, "m", 1, "Algebra", "incorrect", 0.4, variant="number-1"),
    ]
    rows = group_rows(sols, "level", BOOT)
    # The original prompt comes before its variants, configurations in name order.
    assert [r.cell for r in rows] == [("m", "baseline", "original"), ("m", "baseline", "number-1"),
                                      ("m", "rag", "original")]
    acc = {r.cell: r.accuracy.estimate for r in rows}
    assert acc == {("m", "baseline", "original"): 1.0, ("m", "baseline", "number-1"): 0.0,
                   ("m", "rag", "original"): 0.5}
    maple = {r.cell: r.mean_maple.estimate for r in rows}
    assert maple[("m", "rag", "original")] == pytest.approx(0.4) and maple[("m", "baseline", "number-1")] == 0.4
    points = figure_data(rows, "level").points
    assert [(p.configuration, p.variant, p.accuracy) for p in points] == [
        ("baseline", "original", 1.0), ("baseline", "number-1", 0.0), ("rag", "original", 0.5)]
