"""The report's comparison section (built in-process; the browser test clicks through it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.report.loader import load_runs
from mathlens.report.render import build_report
from support import compare_runs as h

HERE = Path(__file__).resolve().parent




def test_two_runs_get_a_comparison_with_linked_side_by_side_views(tmp_path: Path) -> None:
    a = h.mock_run(tmp_path, "runA", [1, 2, 3, 4], {1, 2, 4})
    b = h.mock_run(tmp_path, "runB", [1, 2, 3, 5], {1, 3, 5})
    report = build_report(load_runs([a, b]))
    section = next(s for s in report.sections if s.id == "compare")
    (view,) = section.data.comparisons
    assert view.only_a == (1, ["arith/q4"]) and view.only_b == (1, ["arith/q5"])
    assert [row[0] for row in view.changed.rows] == ["arith/q2", "arith/q3"]
    assert [p.anchor for p in view.pairs] == list(view.changed.row_links)
    q2 = view.pairs[0]
    assert [s.status for s in q2.sides] == ["correct", "incorrect"]
    assert "2 + 1 = 3." in (q2.sides[0].text or "") and "2 + 1 = 4." in (q2.sides[1].text or "")
    html = report.html()
    for anchor in view.changed.row_links:
        assert f'href="#{anchor}"' in html and f'id="{anchor}"' in html
    acc = next(r for r in view.metrics.rows if r[0] == "final-answer accuracy")
    assert acc[9:11] == (1, 1)  # b and c: q2 went wrong, q3 went right


def test_one_run_with_one_configuration_has_no_comparison(tmp_path: Path) -> None:
    a = h.mock_run(tmp_path, "solo", [1, 2], {1})
    report = build_report(load_runs([a]))
    assert "compare" not in [s.id for s in report.sections]
    assert ("compare", "nothing to show for these runs") in report.skipped


@pytest.mark.parametrize("variants", [False, True])
def test_one_run_with_configurations_or_variants(tmp_path: Path, variants: bool) -> None:
    run = h.store_run(tmp_path / "r", variants=variants)
    h.cli_json("analyze", str(run), cache=tmp_path / ".cache")
    report = build_report(load_runs([run]))
    section = next(s for s in report.sections if s.id == "compare")
    titles = [c.title for c in section.data.comparisons]
    if variants:
        assert titles == ["A: one · variant=original · B: one · variant=number-1"]
    else:
        assert titles == ["A: one · configuration=baseline · B: one · configuration=rag",
                          "A: one · configuration=baseline · B: one · configuration=contextual"]
