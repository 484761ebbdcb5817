"""Labels, complexity, graph, metrics, the flow analyzer over a run, and the CLI commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from mathlens.analyze.flow import analyze_solution, complexity_score
from mathlens.analyze.flow.annotate import complexity_level, label, load_lexicon
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.registry import ANALYZERS, get_analyzer, run_analyzers, select
from mathlens.cli.main import app
from mathlens.errors import UnknownNameError
from support.runs import one_question_run

GRADIENT = """Start solving the calculus problem step by step.
(a) Find ∇f: using partial derivatives, f_x = 2xy and f_y = x^2.
(b) Compute ∇f(-1,4) = <2(-1)(4), (-1)^2> = <-8, 1>.
(c) The direction of most rapid increase at (-1,4) is along ∇f = <-8, 1>.
(d) The maximum rate of change is ||∇f|| = sqrt((-8)^2 + 1^2) = sqrt(65)."""
QUESTION = "For f(x,y) = x^2 y, (a) find ∇f, (b)-(d) the gradient, direction and rate at (-1, 4)."


def test_lexicon_labels_operations_and_concepts() -> None:
    ops, concepts = label("Using the chain rule, differentiate and then evaluate at x = 1.", set())
    assert ops[:2] == ["differentiation", "evaluation"]
    assert "chain rule" in concepts
    ops, _ = label("x^2 dx", {"integral"})
    assert ops == ["integration"]
    assert load_lexicon().version.startswith("operations-v")


def test_complexity_levels_follow_the_points_rule() -> None:
    assert complexity_level(2, [], [], set()) == "low"
    assert complexity_level(4, ["evaluation"], ["gradient"], set()) == "medium"
    assert complexity_level(7, ["differentiation", "evaluation"], ["chain rule"], {"derivative"}) == "high"


def test_complexity_score_formula() -> None:
    assert complexity_score(4, 4, 5.0) == 0.5 * 4 + 0.3 * 4 + 0.2 * 5.0
    assert complexity_score(1, 0, None) == 0.5


def test_gradient_solution_metrics_and_graph() -> None:
    result = analyze_solution(GRADIENT, QUESTION)
    m = result.metrics
    assert m.total_steps == 5
    assert m.invalid_steps == 0
    assert m.first_invalid_step is None
    assert result.steps[1].verdict == "valid"  # f_x, f_y checked against the question's f
    assert result.steps[4].final
    assert (2, 3) in {(e.source, e.target) for e in result.edges}  # <-8, 1> is reused
    assert m.complexity_score == complexity_score(m.unique_operations, m.unique_concepts, m.mean_depth)
    assert len(m.reasoning_pattern) == m.total_steps


def test_first_invalid_step_and_redundancy() -> None:
    text = "A = 3 + 4 = 7.\nB = 10 * 2 = 21.\nC = 99 - 1 = 98.\nSo A + B = 28, the answer is 28."
    result = analyze_solution(text)
    assert result.metrics.first_invalid_step == 1
    assert result.steps[1].claims[-1].expected == "20"
    assert result.metrics.redundant_steps == [2]  # C is never used


def test_flow_analyzer_writes_flow_json_idempotently(tmp_path: Path) -> None:
    store = one_question_run(tmp_path / "run", [GRADIENT, "f_x = 2xy + 1\nThe answer is <-8, 1>."])
    summary = run_analyzers(store, ["flow"])["flow"]
    assert summary.status == "ok" and summary.summary is not None
    assert summary.summary.analysed == 2
    first = FLOW.path(store.root).read_text()
    entries = list(FLOW.entries(store.root))
    assert [e.status for e in entries] == ["ok", "ok", "no_response"]
    assert [e.record.key for e in entries] == ["k0", "k1", "k2"]  # k2: the failed request
    # The question's f(x, y) = x^2 y was used: f_x = 2xy + 1 is wrong.
    assert entries[1].result is not None and entries[1].result.metrics.first_invalid_step == 0
    doc = FLOW.read(store.root)
    assert doc is not None and doc.envelope.entries == 3 and doc.envelope.run_id == "t"
    [row] = doc.summary.exams
    assert row.responses == 2 and row.mean_steps is not None and row.sd_complexity is not None
    run_analyzers(store, ["flow"])
    assert FLOW.path(store.root).read_text() == first


def test_registry_names_and_errors() -> None:
    assert "flow" in ANALYZERS
    assert get_analyzer("flow").writes == (FLOW,)
    try:
        select(["flwo"])
    except UnknownNameError as exc:
        assert "flow" in str(exc)
    else:
        raise AssertionError("an unknown analyzer name must be refused")


def test_cli_flow_and_analyze(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["flow", "2 + 2 = 5", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["metrics"]["first_invalid_step"] == 0
    text = runner.invoke(app, ["flow", "Step 1: 3 * 3 = 9.\nStep 2: The answer is 9."])
    assert text.exit_code == 0 and "Total steps: 2" in text.stdout
    store = one_question_run(tmp_path / "run", ["1 + 1 = 2"])
    done = runner.invoke(app, ["analyze", str(store.root), "--only", "flow", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["analyzers"]["flow"]["summary"]["analysed"] == 1
    missing = runner.invoke(app, ["analyze", str(tmp_path / "nope")])
    assert missing.exit_code == 2


def test_the_printed_exam_table_puts_each_figure_under_its_named_column() -> None:
    from mathlens.analyze.flow.models import ExamRow
    from mathlens.analyze.flow.report import exam_rows

    row = ExamRow(exam_id="calc1", model="m", configuration="baseline", responses=3, mean_steps=4.5,
                  mean_complexity=2.25, sd_complexity=0.5, mean_invalid_steps=0.333)
    empty = ExamRow(exam_id="calc2", model="m", configuration="baseline", responses=0, mean_steps=None,
                    mean_complexity=None, sd_complexity=None, mean_invalid_steps=None)
    table = exam_rows([row, empty])
    assert table.headers == ("exam", "model", "config", "n", "steps", "complexity", "invalid/resp")
    cells = [dict(zip(table.headers, r, strict=True)) for r in table.rows]
    assert cells[0] == {"exam": "calc1", "model": "m", "config": "baseline", "n": "3", "steps": "4.50",
                        "complexity": "2.25 ± 0.50", "invalid/resp": "0.33"}
    assert (cells[1]["steps"], cells[1]["complexity"], cells[1]["invalid/resp"]) == ("-", "-", "-")
    assert table.right == {"n", "steps", "complexity", "invalid/resp"}  # figures aligned right


def _operation_cases() -> list[tuple[str, dict[str, Any]]]:
    table = yaml.safe_load((Path(__file__).parents[1] / "cases" / "flow" / "operations_in_code.yaml").read_text())
    return [(group, case) for group, cases in table.items() for case in cases]


@pytest.mark.parametrize(("group", "case"), _operation_cases(),
                         ids=[f"{g}: {c['step']}" for g, c in _operation_cases()])
def test_a_call_in_code_names_its_operation(group: str, case: dict[str, Any]) -> None:
    ops, _ = label(case["step"], set())
    assert set(case.get("has", [])) <= set(ops), (case, ops)
    assert not set(case.get("not", [])) & set(ops), (case, ops)
