"""Dimension percentages: points over possible points, negative items, and incomplete responses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.adaptivity.design import Cell
from mathlens.analyze.adaptivity.judge import ScoreSet
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.analyze.adaptivity.study import StudyOptions, load_cells, new_manifest, run_study
from mathlens.analyze.adaptivity.tables import dimension_scores, table1, table2
from mathlens.analyze.judging.entries import Judgement, UnitScore, settle
from mathlens.runs.store import RunStore

RUBRIC = load_rubric()


@pytest.fixture
async def two_cells(tmp_path: Path, mock_model: Any) -> list[Cell]:
    profiles = tmp_path / "p.yaml"
    profiles.write_text("- {id: kim, grade: 4, performance: low}\n", encoding="utf-8")
    manifest = new_manifest(StudyOptions(items=["tutoring"], models=["mock/t"], profiles=str(profiles),
                                         conditions=[1], limit=2))
    store = RunStore(tmp_path / "run")
    await run_study(store, manifest, {"mock/t": mock_model(responses=["ok"], name="t")})
    return load_cells(store)


def scores_for(cell: Cell, values: dict[str, int | None]) -> Judgement:
    scores = [UnitScore(unit=i, value=v, error="" if v is not None else "left blank") for i, v in values.items()]
    return settle(cell.ref, "human:x", scores, 21, expected=19)


async def test_percentages_by_hand(two_cells: list[Cell]) -> None:
    first, second = two_cells
    adapt = {f"Q{k}": 0 for k in range(1, 10)} | {"Q2": -1, "Q3": 1, "Q6": 1, "Q9": 1}
    correct = {"Q10": 1, "Q11": 1, "Q12": 1}
    quality = {f"Q{k}": 1 for k in range(13, 20)} | {"Q15": None}
    s = ScoreSet(grader="human:x", rubric="v1", judgements=(scores_for(first, {**adapt, **correct, **quality}),
                                                            scores_for(second, {"Q10": 0})))
    assert s.counts() == {"ok": 19, "unscored": 1} and s.judgements[0].status == "ungraded"
    rows = {(r.record.key, r.dimension): r for r in dimension_scores(two_cells, s, RUBRIC)}
    a = rows[(first.key, "adaptivity")]
    # -1 + 1 + 1 + 1 = 2 points of 9 possible
    assert (a.points, a.possible, a.status) == (2, 9, "complete") and a.percent == pytest.approx(200 / 9)
    c = rows[(first.key, "correctness")]
    assert (c.points, c.possible) == (3, 4) and c.percent == pytest.approx(75.0)
    q = rows[(first.key, "quality")]
    assert (q.status, q.n_scored, q.percent) == ("partial", 6, None)
    assert rows[(second.key, "adaptivity")].status == "unscored"
    assert rows[(second.key, "correctness")].status == "partial"
    t1 = {(r.dimension): r for r in table1(list(rows.values()), n_resamples=100)}
    assert t1["correctness"].n == 1 and t1["correctness"].excluded == 1
    assert t1["correctness"].mean_percent.estimate == pytest.approx(75.0)
    assert t1["quality"].n == 0 and t1["quality"].mean_percent.status == "empty"
    t2 = {(r.model, r.code): r for r in table2(two_cells, s, RUBRIC)}
    assert t2[("mock/t", "LA")].percent_satisfied == 0.0  # -1 does not meet the criterion
    assert t2[("mock/t", "SE")].percent_satisfied == 100.0 and t2[("mock/t", "SE")].n == 1
    assert t2[("all", "Prac")].percent_satisfied == 0.0
