"""The hybrid step check: the judge is asked only about undecided steps, provenance is kept."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.flow.hybrid import hybrid_check, undecided_steps
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.maple.vr import vr_from_flow
from mathlens.cli.main import app
from mathlens.runs.records import ModelEntry
from support.runs import one_question_run

# Step 1 is checked valid, step 2 has no checkable math, step 3 is a slip SymPy catches.
SOLUTION = "Step 1: 2 + 2 = 4.\nStep 2: Since the figure is a square, all sides are equal.\nStep 3: 3 * 3 = 10."


def _reply(*verdicts: tuple[int, str]) -> str:
    return json.dumps({"steps": [{"step": n, "verdict": v, "reason": f"step {n} is {v}"} for n, v in verdicts]})


def test_the_judge_decides_only_the_undecided_steps_and_disagreements_are_kept(mock_model: Any) -> None:
    flow = analyze_solution(SOLUTION)
    assert [s.verdict for s in flow.steps] == ["valid", "none", "invalid"]
    assert undecided_steps(flow) == [1]
    judge = mock_model(responses=[_reply((2, "incorrect"), (3, "correct"))])
    result = asyncio.run(hybrid_check(flow, "A square has side 2.", judge))
    assert result.status == "ok" and result.asked == [1]
    assert [(s.verdict, s.provenance) for s in result.steps] == [
        ("valid", "symbolic"), ("invalid", "judge"), ("invalid", "symbolic")]
    # The judge called the slip correct: SymPy's verdict stands and the disagreement is recorded.
    assert result.steps[2].disagreement and result.steps[2].judge == "correct"
    assert result.disagreements == 1 and result.first_invalid_step == 1
    [(messages, _, schema)] = judge.provider.requests
    prompt = messages[-1].content
    assert "Judge only steps 2." in prompt
    assert "- Step 3: invalid" in prompt and "- Step 1: valid" in prompt  # the symbolic evidence
    assert schema is not None and "steps" in schema["properties"]


def test_agreement_is_marked_both_and_unsure_leaves_the_step_undecided(mock_model: Any) -> None:
    flow = analyze_solution(SOLUTION)
    judge = mock_model(responses=[_reply((1, "correct"), (2, "unsure"))])
    result = asyncio.run(hybrid_check(flow, None, judge))
    assert [s.provenance for s in result.steps] == ["both", "none", "symbolic"]
    assert result.steps[1].verdict == "none" and result.steps[1].judge == "unsure"
    assert result.disagreements == 0


def test_no_call_when_sympy_decided_every_step(mock_model: Any) -> None:
    flow = analyze_solution("1 + 1 = 2.\n2 * 3 = 7.")
    judge = mock_model(responses=[_reply((1, "incorrect"))])
    result = asyncio.run(hybrid_check(flow, None, judge))
    assert result.status == "not_needed" and judge.provider.requests == []
    assert [s.provenance for s in result.steps] == ["symbolic", "symbolic"]


def test_a_failing_judge_leaves_the_symbolic_verdicts(mock_model: Any) -> None:
    flow = analyze_solution(SOLUTION)
    judge = mock_model(responses=["no idea", "still not json"])
    result = asyncio.run(hybrid_check(flow, None, judge))
    assert result.status == "invalid" and result.error
    assert [s.verdict for s in result.steps] == ["valid", "none", "invalid"]
    assert len(judge.provider.requests) == 2  # one repair retry


def test_judge_calls_are_cached(mock_model: Any) -> None:
    flow = analyze_solution(SOLUTION)
    judge = mock_model(responses=[_reply((2, "correct"))], cache=True)
    first = asyncio.run(hybrid_check(flow, None, judge))
    second = asyncio.run(hybrid_check(flow, None, judge))
    assert first == second and len(judge.provider.requests) == 1


def test_maple_validity_from_the_hybrid_check(mock_model: Any) -> None:
    flow = analyze_solution(SOLUTION)
    plain = vr_from_flow(flow)
    hybrid = asyncio.run(hybrid_check(flow, None, mock_model(responses=[_reply((2, "incorrect"))])))
    mixed = vr_from_flow(flow, hybrid=hybrid)
    assert (plain.v, plain.source) == (0.5, "flow")
    assert mixed.v is not None and abs(mixed.v - 1 / 3) < 1e-9 and mixed.source == "flow+judge"


def test_analyze_with_a_step_judge_writes_the_hybrid_verdicts(tmp_path: Path) -> None:
    store = one_question_run(tmp_path / "run", [SOLUTION])
    reply = _reply((2, "incorrect"))
    out = CliRunner().invoke(app, ["analyze", str(store.root), "--only", "flow", "--step-judge", "mock/judge",
                                   "-J", f"responses={json.dumps([reply])}", "--json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)["analyzers"]["flow"]["summary"]
    assert summary["step_judge"]["steps_by_provenance"] == {"symbolic": 2, "judge": 1, "both": 0, "none": 0}
    doc = FLOW.read(store.root)
    assert doc is not None and doc.summary.step_judge is not None and doc.summary.step_judge.judge == "mock/judge"
    assert doc.options["step_judge"] == "mock/judge"
    entries = list(FLOW.entries(store.root))
    hybrid = entries[0].hybrid
    assert hybrid is not None and [s.provenance for s in hybrid.steps] == ["symbolic", "judge", "symbolic"]
    assert entries[1].hybrid is None  # the failed record has no analysis
    refused = CliRunner().invoke(app, ["analyze", str(store.root), "--only", "answers", "--step-judge", "mock/j"])
    assert refused.exit_code == 2


def test_maple_step_judge_needs_the_flow_validity(tmp_path: Path) -> None:
    import pytest

    from mathlens.analyze.maple.pipeline import MapleOptions, score_run
    from mathlens.errors import UserError

    store = one_question_run(tmp_path / "run", [SOLUTION])
    with pytest.raises(UserError, match="--vr flow"):
        asyncio.run(score_run(store, MapleOptions(step_judge="mock/j", vr_source="judge"), ModelEntry(spec="mock/j")))
