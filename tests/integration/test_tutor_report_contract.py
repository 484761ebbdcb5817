"""The tutoring results contract end to end: a mock tutoring run, the `tutor_scores` analyzer with a
scripted judge (through the registry, as `mathlens tutor score` runs it), `mathlens tutor stats`, and
the report sections reading the figures back through the document specs.

The scripted judge gives every item its top score when the learner described themselves (context
condition 2) and the lowest score to every adaptivity item otherwise (condition 1), so the expected
figures follow from the rubric by hand: adaptivity is 100% under condition 2 and (-1 - 1) / 9 of the
possible points under condition 1 (Q2 and Q3 score -1 at their lowest, Q1 and Q4-Q9 score 0).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.analyze.adaptivity.agreement import TUTOR_AGREEMENT
from mathlens.analyze.adaptivity.judge import TUTOR_SCORES
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.analyze.adaptivity.tables import TUTOR_STATS
from mathlens.analyze.registry import run_one
from mathlens.cli.main import app
from mathlens.models.base import Message
from mathlens.report.context import ReportContext
from mathlens.report.loader import load_runs, question_views
from mathlens.report.registry import load_sections
from mathlens.report.render import build_report
from mathlens.report.sections import adaptivity, adaptivity_items, agreement
from mathlens.runs.store import RunStore

RUBRIC = load_rubric()
LOW_ADAPTIVITY = 100.0 * (-1 - 1) / 9


def scripted_judge(messages: list[Message]) -> str:
    text = messages[-1].content
    item = RUBRIC.item(re.search(r"Rubric question (Q\d+)", text).group(1))  # type: ignore[union-attr]
    described = "I am in grade" in text.split("What the tutor was given:")[1]
    label = item.scale[0].label if item.dimension == "adaptivity" and not described else item.scale[-1].label
    return json.dumps({"rationale": f"scripted {item.id}", "rating": label})


def cli(*args: str) -> dict:  # type: ignore[type-arg]
    res = CliRunner().invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("tutor") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MATHLENS_CACHE_DIR", str(run.parent / "cache"))
        cli("tutor", "run", "tutoring", "--model", "mock/tutor", "-M", 'responses=["Let us work it out together."]',
            "--conditions", "1,2", "--limit", "2", "--out", str(run))
        summary = run_one(RunStore(run), "tutor_scores", judge="mock/judge", judge_options={"func": scripted_judge})
        assert summary.summary is not None
        assert summary.summary.counts == {"ok": 12 * 19} and summary.summary.grader == "judge:mock/judge"
        cli("tutor", "stats", str(run))
    return run


def test_documents_hold_what_the_judge_said(scored_run: Path) -> None:
    doc = TUTOR_SCORES.read(scored_run)
    # one judgement per response, each with its 19 item scores
    assert doc is not None and doc.summary.responses == 12 and doc.envelope.entries == 12
    assert doc.summary.counts == {"ok": 12 * 19}
    assert doc.envelope.options == {"items": [], "limit": None, "max_tokens": 160}
    for entry in TUTOR_SCORES.entries(scored_run):
        assert [s.unit for s in entry.scores] == [f"Q{i}" for i in range(1, 20)] and entry.status == "graded"
        condition_1 = entry.record.configuration == "condition-1"
        for score in entry.scores:
            item = RUBRIC.item(score.unit)
            low = item.dimension == "adaptivity" and condition_1
            assert score.value == (item.min_value if low else item.max_value), (entry.record.key, score.unit)
            assert score.rationale == f"scripted {item.id}"
        # the total is the sum of the items, at most 9 + 4 + 7 = 20 (adaptivity, correctness, quality); under
        # condition 1 the adaptivity items lose their 9 points, and Q2 and Q3 one more each
        assert entry.total == (20 - 9 - 2 if condition_1 else 20) and entry.max_total == 20
    stats = TUTOR_STATS.read(scored_run)
    assert stats is not None and [s.source for s in stats.summary.sources] == ["judge:mock/judge"]


def test_report_sections_show_the_stored_figures(scored_run: Path) -> None:
    runs = load_runs([scored_run])
    ctx = ReportContext(runs=runs, views=question_views(runs))
    data = adaptivity.build(ctx)
    assert data is not None
    by_title = {t.title.split(" (")[0]: t for t in data.tables}
    table1 = by_title["Dimension scores by model and learner performance"]
    rows = {(r[0], r[2]): r for r in table1.rows}
    # every performance level: 2 items x 2 conditions, half at 100% and half at LOW_ADAPTIVITY
    for level in ("high", "intermediate", "low"):
        assert rows[("adaptivity", level)][3] == pytest.approx((100.0 + LOW_ADAPTIVITY) / 2)
        assert rows[("adaptivity", level)][6] == 4
        assert rows[("correctness", level)][3] == pytest.approx(100.0)
    table2 = by_title["Adaptivity sub-metrics by context condition"]
    columns = list(table2.columns)
    by_cell = {(r[0], r[1]): dict(zip(columns, r, strict=True)) for r in table2.rows}
    assert by_cell[("mock/tutor", 1)]["LA"] == 0.0 and by_cell[("mock/tutor", 2)]["LA"] == 100.0
    assert by_cell[("all", 2)]["SBS"] == 100.0

    view = ctx.views[0]
    cards = adaptivity_items.build(ctx, view)
    assert cards is not None and len(cards) == 3 * 2  # three grade-4 learners x two conditions
    for card in cards:
        assert [r[0] for r in card.table.rows] == [f"Q{i}" for i in range(1, 20)]
        assert all(r[4] == f"scripted {r[0]}" for r in card.table.rows)
    q2_scores = sorted(dict((r[0], r[2]) for r in c.table.rows)["Q2"] for c in cards)
    assert q2_scores == [-1, -1, -1, 1, 1, 1]


def test_rendered_page_carries_the_sections(scored_run: Path) -> None:
    report = build_report(load_runs([scored_run]), sections=load_sections(("adaptivity", "adaptivity_items")))
    html = report.html()
    assert 'id="sec-adaptivity"' in html and 'data-section="adaptivity_items"' in html
    assert f"{(100.0 + LOW_ADAPTIVITY) / 2:.1f}" in html


def test_agreement_section_shows_the_stored_rows(scored_run: Path, tmp_path: Path) -> None:
    """An annotator who copies the judge except on Q2 (where they give the opposite end of the scale):
    the report's agreement table holds exactly the rows `mathlens tutor agreement` stored."""
    run = tmp_path / "run"
    shutil.copytree(scored_run, run)
    sheet = tmp_path / "sheet.csv"
    cli("tutor", "worksheet", "export", str(run), "-o", str(sheet), "--items", "Q1,Q2", "--with-judge")
    with sheet.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["score"] = row["judge_score"] if row["item_id"] == "Q1" else str(-int(row["judge_score"]))
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    cli("tutor", "worksheet", "import", str(run), str(sheet), "--annotator", "ana")
    out = cli("tutor", "agreement", str(run), "--resamples", "20")
    by_scope = {r["scope"]: r for r in out["rows"]}
    assert set(by_scope) == {"Q1", "Q2", "adaptivity"} and out["graders"] == ["judge:mock/judge", "human:ana"]
    assert by_scope["Q1"]["stats"]["percent"]["estimate"] == 1.0 and by_scope["Q2"]["percent"]["estimate"] == 0.0
    assert (by_scope["adaptivity"]["n"], by_scope["adaptivity"]["percent"]["estimate"]) == (24, 0.5)

    stored = TUTOR_AGREEMENT.read(run)
    assert stored is not None
    runs = load_runs([run])
    data = agreement.build(ReportContext(runs=runs, views=question_views(runs)))
    assert data is not None
    [table] = [t for t in data.tables if t.title.startswith("Tutoring rubric agreement")]
    assert [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in table.rows] == [
        (p.a, p.b, p.scope, p.unit, p.n, p.percent.estimate if p.percent else None) for p in stored.summary.pairs]
