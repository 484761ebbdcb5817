"""A response the token cap cut has no answer: its reasoning graph is read against the last step
written, and the report and the MAPLE basis say so instead of calling its steps off the path to an
answer."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path

from typer.testing import CliRunner

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.maple.vr import CUT_BASIS, vr_from_flow
from mathlens.cli.main import app
from mathlens.report import make_report
from mathlens.report.sections.flow import REDUNDANT_WORDS, REDUNDANT_WORDS_CUT
from support.runs import one_question_run

# Step 1 defines a name nothing later uses: off the path to the last step.
TEXT = "Step 1: Let a = 5.\nStep 2: Let x = 3.\nStep 3: So 2x = 6."


def _cut_first_record(root: Path) -> None:
    path = root / "records.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["finish_reason"] = "length"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_legend_of_a_cut_response_says_what_its_redundant_steps_are(tmp_path: Path) -> None:
    store = one_question_run(tmp_path / "run", [TEXT, TEXT])
    _cut_first_record(store.root)
    out = CliRunner().invoke(app, ["analyze", str(store.root), "--only", "flow", "--json"])
    assert out.exit_code == 0, out.output
    html = unescape(make_report([store.root]).html())
    # one graph per response, the same steps marked in both; only the words differ
    assert html.count(f"redundant ({REDUNDANT_WORDS_CUT})") == 1
    assert html.count(f"redundant ({REDUNDANT_WORDS})") == 1


def test_maple_r_of_a_cut_response_keeps_its_value_and_names_its_basis() -> None:
    flow = analyze_solution(TEXT)
    assert flow.metrics.redundant_steps == [0]
    whole, cut = vr_from_flow(flow), vr_from_flow(flow, cut=True)
    assert whole.r == cut.r == 1 / 3
    assert CUT_BASIS not in whole.r_basis and cut.r_basis.endswith(CUT_BASIS)
