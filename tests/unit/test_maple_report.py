"""Contract: a mock run, `mathlens maple`, then the report. The MAPLE section shows exactly the
tables and figures the analyzer wrote (read back through the `MAPLE` spec), one figure per
configuration and variant, and the per-question cards show each entry's score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mathlens.analyze.maple.results import MAPLE, GroupRow
from mathlens.report import make_report
from mathlens.report.context import ReportContext
from mathlens.report.loader import load_runs, question_views
from mathlens.report.sections import maple as maple_section
from mathlens.report.sections import maple_steps
from mathlens.report.tables import Cell
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"
REPLY = json.dumps({"erroneous_steps": [{"step": 1, "labels": ["calculation_error"], "reason": "a slip"}],
                    "validity": 0.5, "redundancy": 0.5})




@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scripted run with ablation variants (one right and one wrong solution), then `mathlens maple`."""
    run = fx.make_run(tmp_path_factory.mktemp("maple-report") / "run", [fx.SOLUTION, fx.WRONG], ablate=True,
                      analyze=False)
    fx.cli("maple", str(run), "--judge", "mock/judge", "-J", f"responses={json.dumps([REPLY])}", "--vr", "judge",
           "--no-reflect", "--no-cache", "--resamples", "50")
    return run


def _row(r: GroupRow) -> tuple[Cell, ...]:
    return (r.model, r.configuration, r.variant, r.group, r.n, r.n_correct, r.n_scored, r.n_unjudged,
            r.accuracy.estimate, r.accuracy.low, r.accuracy.high, r.mean_maple.estimate, r.mean_maple.low,
            r.mean_maple.high, r.mean_maple_incorrect.estimate, r.mean_e.estimate, r.n_degenerate)


def test_the_section_shows_the_tables_and_figures_the_analyzer_wrote(run_dir: Path) -> None:
    doc = MAPLE.read(run_dir)
    assert doc is not None
    summary = doc.summary
    cells = summary.cells
    assert len({variant for _, _, variant in cells}) > 1, "the ablated run has variant cells"
    runs = load_runs([run_dir])
    data = maple_section.build(ReportContext(runs=runs, views=question_views(runs)))
    assert data is not None
    tables = {t.title: t for t in data.tables}
    for title, rows in (("All solutions", summary.overall), ("By MATH level", summary.by_level),
                        ("By subject", summary.by_subject)):
        table = tables[f"MAPLE · {title}"]
        assert table.rows == tuple(_row(r) for r in rows)
        assert [tuple(c[:3]) for c in table.rows] == [r.cell for r in rows]
    # One chart per (configuration, variant), metric and figure; its bars are the stored points.
    for figure in (summary.figure3, summary.figure5):
        for _, conf, variant in cells:
            points = [p for p in figure.points if (p.configuration, p.variant) == (conf, variant)]
            titles = [c.title for c in data.charts if c.title.endswith(f" · {conf} · {variant}")
                      and maple_section.X_TITLES[figure.x].lower() in c.title]
            assert len(titles) == (2 if any(p.maple is not None or p.accuracy is not None for p in points) else 0)
    counts = tables["Error labels given"]
    assert counts.rows == tuple((r.model, r.configuration, r.variant, label, n)
                                for r in summary.overall if r.label_counts for label, n in r.label_counts.items())
    settings = dict(data.settings)
    assert settings["judge"] == summary.judge == "mock/judge" and settings["v/r source"] == "judge"


def test_question_cards_show_each_entry(run_dir: Path) -> None:
    runs = load_runs([run_dir])
    views = question_views(runs)
    ctx = ReportContext(runs=runs, views=views)
    entries = {e.record.key: e for e in MAPLE.entries(run_dir)}
    shown = 0
    for view in views:
        cards = maple_steps.build(ctx, view) or []
        assert len(cards) == len(view.originals)
        for card, resp in zip(cards, view.originals, strict=True):
            entry = entries[resp.record.key]
            parts = dict(card.parts)
            assert parts["MAPLE"] == ("–" if entry.maple is None else f"{entry.maple:.3f}")
            assert (card.status, card.answer_status) == (entry.status, entry.answer_status)
            assert (card.steps is not None) == bool(entry.step_labels)
            shown += 1
    assert shown == sum(e.record.original for e in entries.values())


def test_the_page_has_the_section(run_dir: Path) -> None:
    report = make_report([run_dir])
    assert "maple" in {s.id for s in report.sections}
    html = report.html()
    doc = MAPLE.read(run_dir)
    assert doc is not None
    assert 'id="sec-maple"' in html
    for _, conf, variant in doc.summary.cells:
        assert f"{conf} · {variant}" in html
