"""Report building blocks: CSV cells, tables, bar-chart geometry, reasoning-graph layout, prompt diffs,
tolerant analysis readers."""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from mathlens.report.charts import Series, grouped_bars, nice_max, ranked_bars
from mathlens.report.graph import StepNode, layers, layout_graph
from mathlens.report.sections.sensitivity import diff_segments
from mathlens.report.tables import Table, csv_cell, display_cell

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"


def _cases(name: str) -> list[tuple[str, Any]]:
    data = yaml.safe_load((CASES / name).read_text(encoding="utf-8"))
    out = []
    for group, items in data.items():
        if isinstance(items, list):
            out += [(f"{group}-{i}", c) for i, c in enumerate(items)]
        else:
            out.append((group, items))
    return out


@pytest.mark.parametrize(("case_id", "case"), _cases("csv_cells.yaml"))
def test_csv_cell(case_id: str, case: dict[str, Any]) -> None:
    assert csv_cell(case["value"]) == case["csv"], case_id


def test_table_csv_and_data_url_round_trip() -> None:
    t = Table("t-1", "T", ("question", "answer", "score"),
              (("q1", 'he said "x, y"', 0.25), ("q2", "=1+1", None), ("q3", "line\nbreak", 3)))
    rows = list(csv.reader(io.StringIO(t.to_csv())))
    assert rows == [["question", "answer", "score"], ["q1", 'he said "x, y"', "0.25"], ["q2", "'=1+1", ""],
                    ["q3", "line\nbreak", "3"]]
    url = t.data_url()
    assert url is not None and url.startswith("data:text/csv;charset=utf-8,")
    body = url.split(",", 1)[1]
    assert "<" not in body and '"' not in body and " " not in body  # fully percent-encoded
    assert unquote(body) == t.to_csv()
    assert t.filename == "t-1.csv"


def test_export_rows_replace_display_rows_in_csv() -> None:
    t = Table("x", "X", ("metric",), (("0.5 ± 0.1",),), export_columns=("mean", "sd"), export_rows=((0.5, 0.1),))
    assert t.to_csv() == "mean,sd\n0.5,0.1\n"


def test_display_cells() -> None:
    assert display_cell(None) == "–"
    assert display_cell(0.123456) == "0.123"
    assert display_cell(2.0, 1) == "2.0"
    assert display_cell(True) == "yes"
    assert display_cell(7) == "7"


@pytest.mark.parametrize(("value", "expected"), [(0.93, 1.0), (1.0, 1.0), (73.0, 100.0), (17.4, 20.0),
                                                 (2.05, 2.5), (0.0, 1.0), (4.1, 5.0)])
def test_nice_max(value: float, expected: float) -> None:
    assert nice_max(value) == pytest.approx(expected)


def test_grouped_bars_heights_are_proportional_and_missing_values_have_no_bar() -> None:
    chart = grouped_bars("c", "Scores", ["exam 1", "exam 2"],
                         [Series("model", (50.0, None)), Series("class", (100.0, 25.0))], y_title="Score (%)",
                         y_max=100.0)
    assert chart is not None
    assert len(chart.bars) == 3
    heights = sorted(b.height for b in chart.bars)
    assert heights == pytest.approx([chart.plot_h * 0.25, chart.plot_h * 0.5, chart.plot_h])
    for b in chart.bars:  # every bar stands on the x axis
        assert b.y + b.height == pytest.approx(chart.plot_y + chart.plot_h)
    assert [t.text for t in chart.ticks] == ["0", "20", "40", "60", "80", "100"]
    assert [entry.text for entry in chart.legend] == ["model", "class"]
    assert grouped_bars("e", "Empty", ["a"], [Series("s", (None,))], y_title="y") is None


def test_grouped_bars_error_bars_and_legend_wrapping() -> None:
    names = [f"a rather long series name number {i}" for i in range(6)]
    chart = grouped_bars("c", "T", ["x"], [Series(n, (0.5,), lows=(0.4,), highs=(0.6,)) for n in names],
                         y_title="y", y_max=1.0)
    assert chart is not None
    b = chart.bars[0]
    assert b.err_high is not None and b.err_low is not None and b.err_high < b.y < b.err_low
    rows = {e.y for e in chart.legend}
    assert len(rows) > 1  # wrapped
    for row in rows:  # entries of one row do not overlap
        xs = sorted(e.x for e in chart.legend if e.y == row)
        assert all(b2 - a2 > 100 for a2, b2 in itertools.pairwise(xs))
    assert chart.plot_y > max(rows)


def test_ranked_bars_sort_largest_first() -> None:
    chart = ranked_bars("r", "Impact", [("maximum", 0.373), ("(-1, 4)", 0.630), ("∇f", 0.562)], x_title="Impact",
                        x_max=1.0)
    assert chart is not None
    assert [c.text for c in chart.categories] == ["(-1, 4)", "∇f", "maximum"]
    assert [b.value_text for b in chart.bars] == ["0.630", "0.562", "0.373"]
    assert chart.bars[0].width == pytest.approx(chart.plot_w * 0.630)
    assert ranked_bars("r", "none", [], x_title="x") is None


@pytest.mark.parametrize(("case_id", "case"), _cases("graph_layers.yaml"))
def test_graph_columns(case_id: str, case: dict[str, Any]) -> None:
    got = layers(case["steps"], [tuple(e) for e in case["edges"]])
    assert got == {int(k): v for k, v in case["columns"].items()}, case_id


def _node(i: int, **kw: Any) -> StepNode:
    return StepNode(index=i, label=str(i), text=f"step {i}", **kw)


def test_graph_layout_styles_and_edges() -> None:
    steps = [_node(1, level="low", verification="valid"), _node(2, level="high", verification="invalid"),
             _node(3, level="medium", redundant=True), _node(4)]
    g = layout_graph(steps, [(1, 2), (2, 4), (1, 4), (4, 1)])
    by = {n.index: n for n in g.nodes}
    assert by[1].fill != by[2].fill != by[3].fill
    assert "invalid" in by[2].css and by[2].mark == "✗" and by[2].stroke_width > by[1].stroke_width
    assert "redundant" in by[3].css and by[3].dashed
    assert by[1].mark == "✓"
    assert {(e.source, e.target) for e in g.edges} == {(1, 2), (2, 4), (1, 4)}
    assert g.ignored_edges == ((4, 1),)
    # nodes do not overlap and fit in the drawing
    boxes = [(n.x, n.y, n.x + n.w, n.y + n.h) for n in g.nodes]
    for i, a in enumerate(boxes):
        assert a[2] <= g.width and a[3] <= g.height
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def test_long_chain_wraps_into_bands() -> None:
    steps = [_node(i) for i in range(1, 21)]
    g = layout_graph(steps, [(i, i + 1) for i in range(1, 20)], max_cols=8)
    ys = sorted({n.y for n in g.nodes})
    assert len(ys) == 3  # 20 columns in bands of 8
    assert max(n.x for n in g.nodes) < g.width
    assert layout_graph([], []).nodes == ()


@pytest.mark.parametrize(("case_id", "case"), _cases("diff_segments.yaml"))
def test_diff_segments(case_id: str, case: dict[str, Any]) -> None:
    segs = diff_segments(case["original"], case["variant"])
    assert "".join(t for op, t in segs if op != "insert") == case["original"], case_id
    assert "".join(t for op, t in segs if op != "delete") == case["variant"], case_id
    assert "".join(t for op, t in segs if op == "delete") == case["deleted"], case_id
    assert "".join(t for op, t in segs if op == "insert") == case["inserted"], case_id
