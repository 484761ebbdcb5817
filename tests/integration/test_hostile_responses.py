"""Pathological responses through the whole pipeline (run, analyze, report): each is analysed within
a fixed budget, the work done is bounded (with a recorded note), and nothing hostile reaches the HTML."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.flow.segment import MAX_STEPS
from mathlens.analyze.verify.steps import SOLUTION_BUDGET_S
from mathlens.cli.main import app
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore

#: name -> response text
HOSTILE: dict[str, str] = {
    "nested_parentheses": "Step 1: " + "(" * 10000 + "x" + ")" * 10000,
    "nested_prose": "Then " + "(see (a) " * 2000 + ")" * 2000 + ".",
    "power_tower": "Step 1: x = 9^9^9^9\nStep 2: so x^2 = 9^9^9^9^2\nFinal answer: 9^9^9^9",
    "one_megabyte": "We note that the value is 2 and so it holds. " * 23000,
    "one_line_megabyte": "7" * 1_000_000,
    "rtl_and_nul": "Step 1: \u202ex = 2\u202c\x00 and \u2067y\u2069 = 3\x00 <script>alert(1)</script>\n" * 800,
    "many_claims": "\n".join(f"Step {i}: a_{i} = {i} + b_{i - 1}" for i in range(1, 3001)),
    "unclosed_display": "\\[ x " * 30000,
}
#: Seconds one response may take: the SymPy budget plus the bounded stages around it, with slack for
#: a loaded machine (a budget, not a speed goal: bench/bench_hostile.py measures speed).
BUDGET_S = SOLUTION_BUDGET_S + 20.0


@pytest.mark.parametrize("name", list(HOSTILE))
def test_each_hostile_response_is_bounded(name: str) -> None:
    text = HOSTILE[name]
    start = time.perf_counter()
    result = analyze_solution(text, "Find x.")
    assert time.perf_counter() - start < BUDGET_S
    assert result.status in ("ok", "empty")
    assert len(result.steps) <= MAX_STEPS
    assert all(s.check_status in ("ok", "timeout", "error", "skipped") for s in result.steps)
    assert all(len(s.text) <= 600 for s in result.steps)
    for step in result.steps:  # offsets point into the original text
        assert text[step.start:step.end] == step.text
    if len(text) > 100_000 or name == "many_claims":
        assert any("was not analysed" in n for s in result.steps for n in s.notes)


def test_graph_stays_small_on_repeated_definitions() -> None:
    result = analyze_solution("\n".join(f"Step {i}: x = {i + 20}, so x + 1 = {i + 21}" for i in range(1000)))
    from mathlens.analyze.flow.graph import MAX_PREDECESSORS

    per_target: dict[int, int] = {}
    for edge in result.edges:
        per_target[edge.target] = per_target.get(edge.target, 0) + 1
    assert max(per_target.values()) <= MAX_PREDECESSORS
    assert len(result.steps) == MAX_STEPS


async def test_run_analyze_report(tmp_path: Path) -> None:
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": name, "text": f"Question {name}"}) + "\n" for name in HOSTILE))
    replies = {f"Question {name}": text for name, text in HOSTILE.items()}
    manifest = base_manifest(items=[ItemSource(source=str(data))],
                             models=[ModelEntry(spec="mock/hostile")], generate=GenerateConfig(max_tokens=10**7),
                             system_role="S")
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RetryPolicy(), None)
    models["mock/hostile"].provider.func = lambda msgs: replies[msgs[-1].content]  # type: ignore[attr-defined]
    result = await execute(store, manifest, models)
    assert result.written == len(HOSTILE) and result.errors == 0
    runner = CliRunner()
    res = runner.invoke(app, ["analyze", str(store.root), "--only", "flow", "--json"])
    assert res.exit_code == 0, res.output
    assert {e.record.question_id for e in FLOW.entries(store.root) if e.status == "ok"} == set(HOSTILE)
    res = runner.invoke(app, ["report", str(store.root)])
    assert res.exit_code == 0, res.output
    html = next(store.root.glob("**/report.html")).read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)" in html
    # NUL bytes and the marks that reorder text never reach the page raw: they are shown as escapes
    assert "\x00" not in html and "\u202e" not in html and "\u2067" not in html
    assert "\\u202e" in html and "\\u0000" in html
