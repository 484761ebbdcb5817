"""A response the token cap cut: the line it stops in is not checked, and its reasoning graph, which
has no answer to run to, is read against the last step written (the report and the MAPLE basis say
so instead of calling its steps off the path to an answer)."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path

from typer.testing import CliRunner

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.flow.solution import UNFINISHED
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


def test_the_flow_line_names_its_redundant_steps_as_steps_not_as_a_count(tmp_path: Path) -> None:
    two = "Step 1: Let a = 5.\nStep 2: Let b = 7.\nStep 3: Let x = 3.\nStep 4: So 2x = 6."
    store = one_question_run(tmp_path / "run", [TEXT, two])
    out = CliRunner().invoke(app, ["analyze", str(store.root), "--only", "flow", "--json"])
    assert out.exit_code == 0, out.output
    html = " ".join(unescape(make_report([store.root]).html()).split())
    assert "· redundant step: 1" in html and "· redundant steps: 1, 2" in html


def test_maple_r_of_a_cut_response_keeps_its_value_and_names_its_basis() -> None:
    flow = analyze_solution(TEXT)
    assert flow.metrics.redundant_steps == [0]
    whole, cut = vr_from_flow(flow), vr_from_flow(flow, cut=True)
    assert whole.r == cut.r == 1 / 3
    assert CUT_BASIS not in whole.r_basis and cut.r_basis.endswith(CUT_BASIS)


# The token cap stopped the text inside its last line: "0." was going to be 0.56.
CUT_TEXT = "Step 1: 150 + 130 = 290 metres.\nStep 2: Setting y = 2.5:\n\\[ 2.24 = 0."


def test_the_unfinished_last_line_of_a_cut_response_is_not_checked(tmp_path: Path) -> None:
    whole = analyze_solution(CUT_TEXT)
    assert [c.text for s in whole.steps for c in s.claims if c.status == "invalid"] == ["130 + 150 = 290", "2.24 = 0"]
    cut = analyze_solution(CUT_TEXT, cut=True)
    # the slip written before the cut is still caught; the line the cap stopped in is not read
    assert [c.text for s in cut.steps for c in s.claims if c.status == "invalid"] == ["130 + 150 = 290"]
    assert cut.steps[-1].notes[-1] == UNFINISHED
    # a text that ends with a whole line was cut between lines: nothing is left unread
    assert not any(UNFINISHED in s.notes for s in analyze_solution(CUT_TEXT + "56\n", cut=True).steps)
    # the flow analysis of a run reads the record's finish reason
    store = one_question_run(tmp_path / "run", [CUT_TEXT, CUT_TEXT])
    _cut_first_record(store.root)
    out = CliRunner().invoke(app, ["analyze", str(store.root), "--only", "flow", "--json"])
    assert out.exit_code == 0, out.output
    by_repeat = {e.record.repeat: e.result for e in FLOW.entries(store.root) if e.result is not None}
    assert [by_repeat[0].metrics.invalid_steps, by_repeat[1].metrics.invalid_steps] == [1, 2]
